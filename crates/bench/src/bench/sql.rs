//! SQL fragments that differ between SQLite and PostgreSQL, for the
//! benchmarks' in-engine world generation.

use chrono::{DateTime, Utc};

use crate::db::Backend;

/// SQL that differs between the back ends, for generating worlds in the
/// engine.
pub struct Dialect(pub Backend);

impl Dialect {
    /// `FROM` a series of integers `i` in `[0, n)`.
    pub fn series(&self, n: usize) -> String {
        match self.0 {
            Backend::Sqlite => format!(
                "(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {}) SELECT i FROM s) AS n",
                n.saturating_sub(1)
            ),
            Backend::Postgres => format!("generate_series(0::bigint, {}::bigint) AS n(i)", n as i64 - 1),
        }
    }

    pub(crate) fn ts_lit(&self, t: DateTime<Utc>) -> String {
        let s = t.format("%Y-%m-%d %H:%M:%S");
        match self.0 {
            Backend::Sqlite => format!("'{s}'"),
            Backend::Postgres => format!("TIMESTAMP '{s}'"),
        }
    }

    /// A timestamp `epoch_seconds` after the Unix epoch.
    pub(crate) fn ts_at(&self, epoch_seconds: &str) -> String {
        match self.0 {
            Backend::Sqlite => format!("datetime({epoch_seconds}, 'unixepoch')"),
            Backend::Postgres => format!("(to_timestamp({epoch_seconds}) AT TIME ZONE 'UTC')"),
        }
    }

    pub fn uuid(&self, n: &str) -> String {
        match self.0 {
            Backend::Sqlite => format!("printf('00000000-0000-4000-8000-%012d', {n})"),
            Backend::Postgres => {
                format!("'00000000-0000-4000-8000-' || lpad(({n})::text, 12, '0')")
            }
        }
    }

    /// The length in bytes of the text `expr` (NULL for NULL).
    pub fn octets(&self, expr: &str) -> String {
        match self.0 {
            Backend::Sqlite => format!("length(CAST({expr} AS BLOB))"),
            Backend::Postgres => format!("octet_length({expr})"),
        }
    }
}

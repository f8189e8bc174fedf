//! The process's log on stderr. Its targets read `digestd::MODULE` (as in
//! `[log] level = "warn,digestd::serve=info"`), whichever crate of the
//! workspace holds the module: a filter's `digestd` targets are widened to
//! the crates (`digestd_http::serve`), and each line shows its target with
//! the crate's name folded back to `digestd`.

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The workspace's library crates below this one, as tracing names them,
/// each with the `digestd::…` path its modules are known by (delivery's
/// modules are `digestd::deliver::…`, as the library re-exports them).
const CRATES: &[(&str, &str)] = &[
    ("digestd_core", "digestd"),
    ("digestd_engine", "digestd"),
    ("digestd_deliver", "digestd::deliver"),
    ("digestd_app", "digestd"),
    ("digestd_http", "digestd"),
    ("digestd_bench", "digestd"),
];

/// Installs the log: `RUST_LOG` when set, else `level`; both widened by
/// [`widen`].
pub fn init(level: &str) {
    let given = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = given
        .and_then(|v| tracing_subscriber::EnvFilter::try_new(widen(&v)).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(widen(level)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colours for the fields only on a terminal.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .event_format(Line)
        .with_writer(std::io::stderr)
        .try_init();
}

/// `filter` with each directive whose target is `digestd` or
/// `digestd::…` repeated for every crate of the workspace
/// (`digestd::serve=info` also as `digestd_http::serve=info`, and as the
/// other crates', which match nothing). The directive itself stays: a
/// line may name its target `digestd::…` outright.
pub fn widen(filter: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for d in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        out.push(d.to_string());
        let end = d.find(['[', '=']).unwrap_or(d.len());
        let (target, tail) = d.split_at(end);
        if target != "digestd" && !target.starts_with("digestd::") {
            continue;
        }
        out.extend(
            CRATES
                .iter()
                .filter_map(|(c, p)| in_crate(c, p, target))
                .map(|t| format!("{t}{tail}")),
        );
    }
    out.join(",")
}

/// `target` (a `digestd::…` path) as crate `c`, known as `p`, names it:
/// a module of it, the whole crate when `target` is above `p`, or nothing.
fn in_crate(c: &str, p: &str, target: &str) -> Option<String> {
    if let Some(rest) = target.strip_prefix(p) {
        if rest.is_empty() || rest.starts_with("::") {
            return Some(format!("{c}{rest}"));
        }
    }
    p.strip_prefix(target)
        .is_some_and(|rest| rest.starts_with("::"))
        .then(|| c.to_string())
}

/// `target` as the operator reads it: a workspace crate's name as the
/// `digestd::…` path its modules are known by.
pub fn shown(target: &str) -> std::borrow::Cow<'_, str> {
    for (c, p) in CRATES {
        if let Some(rest) = target.strip_prefix(c) {
            if rest.is_empty() || rest.starts_with("::") {
                return format!("{p}{rest}").into();
            }
        }
    }
    target.into()
}

/// One line per event, as tracing's full format writes it (time, level,
/// the spans with their fields, target, fields), with the target
/// [`shown`].
struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        SystemTime.format_time(&mut w)?;
        write!(w, " {:>5} ", event.metadata().level())?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                w.write_str(span.name())?;
                if let Some(fields) = span.extensions().get::<FormattedFields<N>>() {
                    if !fields.is_empty() {
                        write!(w, "{{{fields}}}")?;
                    }
                }
                w.write_str(": ")?;
            }
        }
        write!(w, "{}: ", shown(event.metadata().target()))?;
        ctx.format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digestd_targets_reach_every_crate_and_others_stay_as_written() {
        assert_eq!(
            widen("warn, digestd::serve=info"),
            "warn,digestd::serve=info,digestd_core::serve=info,digestd_engine::serve=info,\
             digestd_app::serve=info,digestd_http::serve=info,digestd_bench::serve=info"
        );
        assert_eq!(
            widen("digestd=debug"),
            "digestd=debug,digestd_core=debug,digestd_engine=debug,digestd_deliver=debug,\
             digestd_app=debug,digestd_http=debug,digestd_bench=debug"
        );
        assert_eq!(
            widen("digestd::http[http{route}]=trace"),
            "digestd::http[http{route}]=trace,digestd_core::http[http{route}]=trace,\
             digestd_engine::http[http{route}]=trace,digestd_app::http[http{route}]=trace,\
             digestd_http::http[http{route}]=trace,digestd_bench::http[http{route}]=trace"
        );
        // Delivery's modules are `digestd::deliver::…`; the crate is all of it.
        assert_eq!(
            widen("digestd::deliver::queue=debug"),
            "digestd::deliver::queue=debug,digestd_core::deliver::queue=debug,\
             digestd_engine::deliver::queue=debug,digestd_deliver::queue=debug,\
             digestd_app::deliver::queue=debug,digestd_http::deliver::queue=debug,\
             digestd_bench::deliver::queue=debug"
        );
        // Another crate's name that begins alike is not ours.
        assert_eq!(
            widen("digestdx=info,hyper=warn"),
            "digestdx=info,hyper=warn"
        );
        assert_eq!(widen(""), "");
    }

    #[test]
    fn a_crates_name_reads_as_digestd() {
        assert_eq!(shown("digestd_http::serve"), "digestd::serve");
        assert_eq!(shown("digestd_engine"), "digestd");
        assert_eq!(
            shown("digestd_deliver::queue::settle::warn"),
            "digestd::deliver::queue::settle::warn"
        );
        assert_eq!(shown("digestd_deliver"), "digestd::deliver");
        assert_eq!(shown("digestd_app::report"), "digestd::report");
        assert_eq!(shown("digestd::http"), "digestd::http");
        assert_eq!(shown("digestd_httpx::a"), "digestd_httpx::a");
        assert_eq!(shown("hyper::proto"), "hyper::proto");
    }
}

//! The JSON Schemas of docs/schema/ (draft 2020-12, checked with `boon`):
//! every example in docs/input.md and docs/http.md is valid against its
//! schema, and the schemas agree with digestd itself, over real HTTP on
//! each back end: examples the schema accepts are accepted by the routes
//! (2xx), hostile and invalid ones are refused by both (4xx, nothing
//! written). What a schema cannot say (a collection that does not exist, a
//! zone chrono-tz does not know, byte lengths, an attribute named twice)
//! is listed in `beyond_the_schema` and must be refused by digestd alone.
//! This file holds the schemas and the docs' examples; the agreement with
//! digestd over HTTP is `schemas_agree.rs`.

use crate::common;

use std::collections::BTreeMap;

use serde_json::{json, Value};

use common::web::{each_backend, Web};

const BASE: &str = "https://schemas.digestd.invalid/";
const SCHEMAS: [&str; 12] = [
    "common",
    "record-line",
    "modifications",
    "item",
    "user",
    "users",
    "group",
    "subscription",
    "subscription-patch",
    "user-import",
    "subscription-import",
    "group-import",
];

fn docs(path: &str) -> String {
    std::fs::read_to_string(format!("{}/docs/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("docs/{path}: {e}"))
}

/// Every schema, compiled, by name.
pub(crate) struct Schemas {
    set: boon::Schemas,
    index: BTreeMap<&'static str, boon::SchemaIndex>,
}

impl Schemas {
    pub(crate) fn load() -> Schemas {
        let mut compiler = boon::Compiler::new();
        compiler.enable_format_assertions();
        for name in SCHEMAS {
            let text = docs(&format!("schema/{name}.schema.json"));
            let v: Value = serde_json::from_str(&text).expect("a schema is JSON");
            assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
            assert_eq!(v["$id"], format!("{BASE}{name}.schema.json"));
            compiler
                .add_resource(&format!("{BASE}{name}.schema.json"), v)
                .unwrap();
        }
        let mut set = boon::Schemas::new();
        let index = SCHEMAS
            .iter()
            .map(|name| {
                let idx = compiler
                    .compile(&format!("{BASE}{name}.schema.json"), &mut set)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                (*name, idx)
            })
            .collect();
        Schemas { set, index }
    }

    pub(crate) fn check(&self, schema: &str, v: &Value) -> Result<(), String> {
        self.set
            .validate(v, self.index[schema])
            .map_err(|e| format!("{e:#}"))
    }
}

/// The examples of docs/input.md: every line of a ```json block, with the
/// schema its section's heading names.
pub(crate) fn input_examples() -> Vec<(&'static str, Value)> {
    let text = docs("input.md");
    let mut out = Vec::new();
    let mut section = "";
    let mut in_json = false;
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.contains("`digestd record`") {
                "record-line"
            } else if h.contains("`digestd item put`") {
                "item"
            } else {
                ""
            };
        } else if let Some(rest) = line.strip_prefix("- `") {
            // The import section: each bullet names its format.
            for (name, schema) in [
                ("user import`", "user-import"),
                ("subscription import`", "subscription-import"),
                ("group import`", "group-import"),
            ] {
                if rest.starts_with(name) {
                    section = schema;
                }
            }
        } else if line == "```json" {
            in_json = true;
        } else if line.starts_with("```") {
            in_json = false;
        } else if in_json && !line.trim().is_empty() {
            assert!(!section.is_empty(), "a JSON example with no schema: {line}");
            out.push((section, serde_json::from_str(line).expect(line)));
        }
    }
    out
}

/// The request bodies of docs/http.md's curl lines (`--data '…'` or
/// `-d '…'`), with the schema their method and path name; routes without
/// a schema are left out.
pub(crate) fn http_examples() -> Vec<(&'static str, Value)> {
    let text = docs("http.md").replace("\\\n", " ");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.contains("curl ")) {
        let body = ["--data '", "-d '"]
            .iter()
            .find_map(|flag| line.split_once(flag))
            .and_then(|(_, rest)| rest.split_once('\''))
            .map(|(body, _)| body);
        let Some(body) = body else { continue };
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .expect("a curl line has a URL");
        let path = url.split_once("/api/v1/").map_or("", |(_, p)| p);
        let method = if line.contains("-X PUT") {
            "PUT"
        } else if line.contains("-X PATCH") {
            "PATCH"
        } else {
            "POST"
        };
        let mut v: Value = serde_json::from_str(body).expect(body);
        let schema = match (method, path.split('/').collect::<Vec<_>>().as_slice()) {
            ("POST", ["modifications"]) => "modifications",
            ("PUT", ["items", uuid]) => {
                v["uuid"] = json!(uuid);
                "item"
            }
            ("PUT", ["users", _]) => "user",
            ("POST", ["users"]) => "users",
            ("PUT", ["groups", _]) => "group",
            ("POST", ["subscriptions"]) => "subscription",
            ("PATCH", ["subscriptions", _]) => "subscription-patch",
            _ => continue,
        };
        out.push((schema, v));
    }
    out
}

#[test]
fn every_example_in_the_docs_is_valid_against_its_schema() {
    let s = Schemas::load();
    let input = input_examples();
    assert!(input.iter().any(|(k, _)| *k == "record-line"), "{input:?}");
    assert!(input.iter().any(|(k, _)| *k == "item"), "{input:?}");
    for kind in ["user-import", "subscription-import", "group-import"] {
        assert!(input.iter().any(|(k, _)| *k == kind), "{kind}: {input:?}");
    }
    let http = http_examples();
    for kind in [
        "modifications",
        "item",
        "user",
        "users",
        "group",
        "subscription",
        "subscription-patch",
    ] {
        assert!(http.iter().any(|(k, _)| *k == kind), "{kind}: {http:?}");
    }
    for (schema, v) in input.iter().chain(&http) {
        if let Err(e) = s.check(schema, v) {
            panic!("{schema}: {v}\n{e}");
        }
    }
}

#[test]
fn docs_input_md_links_every_schema() {
    let input = docs("input.md");
    for name in SCHEMAS {
        assert!(
            input.contains(&format!("schema/{name}.schema.json")),
            "docs/input.md links {name}"
        );
    }
}

/// docs/input.md's import lines, which their schemas accept, are imported
/// by the commands' library calls, in the docs' order, on a database with
/// nothing in it.
#[test]
fn the_import_examples_import() {
    let examples: Vec<(&str, Value)> = input_examples()
        .into_iter()
        .filter(|(k, _)| k.ends_with("-import"))
        .collect();
    assert_eq!(examples.len(), 3, "{examples:?}");
    each_backend(common::at("2026-11-25T09:00:00Z"), |w| {
        let mut c = w.db.conn();
        let at = w.clock_now();
        for (schema, v) in &examples {
            let line = v.to_string();
            let done = match *schema {
                "user-import" => digestd::import::users::check(&mut c, line.as_bytes())
                    .and_then(|ok| digestd::import::users::write(&mut c, at, &ok, &mut |_| {}))
                    .map(|d| d.created),
                "subscription-import" => {
                    digestd::import::subs::import(&mut c, at, line.as_bytes(), false, &mut |_| {})
                        .map(|ids| ids.len())
                }
                "group-import" => {
                    digestd::import::groups::import(&mut c, at, line.as_bytes(), &mut |_| {})
                }
                other => panic!("no import for {other}"),
            };
            assert_eq!(done.unwrap_or_else(|e| panic!("{schema}: {line}: {e}")), 1);
        }
    });
}

/// The server's clock, read as the routes read it.
pub(crate) trait Now {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc>;
}
impl Now for Web {
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use digestd::clock::Clock;
        self.clock.now()
    }
}

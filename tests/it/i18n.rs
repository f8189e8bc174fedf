//! Digests in the recipient's language through the real tick, on each back
//! end: a German, an Austrian, a Japanese and an English subscriber of one
//! calendar read their own words, plurals and dates, and recipients of
//! one language, zone and clock still share one rendering. Then the
//! binary: an `[i18n] dir` override changes one message, a broken one stops
//! `digestd check` with one line, and `[branding]` shows in the email's
//! HTML or is refused. Expected texts are written out by hand.

use crate::common;

use common::cli::Env;
use common::digest::{calendar_week, calendar_world, composer, daily, requests, subscribe, user};
use common::{at, TestDb};
use diesel::prelude::*;
use digestd::db::schema::nt_bodies;
use digestd::schedule::tick::tick;
use digestd::subscriptions::SubscribeRequest;

fn at_hour(party: &str, cal: &str, hour: i64) -> SubscribeRequest {
    SubscribeRequest {
        hour: Some(hour),
        ..daily(party, cal)
    }
}

fn each_subscriber_reads_their_own_language(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    user(&mut c, "dora", "Europe/Berlin", "de-DE", None);
    user(&mut c, "dieter", "Europe/Berlin", "de-DE", None);
    user(&mut c, "kenji", "Asia/Tokyo", "ja-JP", None);
    // All due at 17:00Z: 9:00 in Los Angeles, 18:00 in Berlin, 2:00 in Tokyo.
    subscribe(&mut c, daily("ann", &cal));
    subscribe(&mut c, at_hour("dora", &cal, 18));
    subscribe(&mut c, at_hour("dieter", &cal, 18));
    subscribe(&mut c, at_hour("kenji", &cal, 2));
    calendar_week(&mut c, &cal);
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut composer()).unwrap();
    let reqs = requests(&mut c);
    assert_eq!(reqs.len(), 4);
    let to = |needle: &str| {
        reqs.iter()
            .find(|r| r.text.contains(needle))
            .unwrap_or_else(|| panic!("no digest with {needle}"))
    };
    // English, as it always was.
    let ann = to("Manage your subscriptions");
    assert_eq!(ann.subject, "Daily digest: Calendar");
    assert_eq!(
        ann.heading(),
        "2 changes in Calendar since Saturday 4:00 PM"
    );
    assert!(ann.text.contains(
        "gr24 changed the start time of Janitor's Pipe Dream from 3:00 PM to 4:00 PM PST on Mon, Nov 23"
    ));
    assert!(ann.html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    // German: 24-hour, Berlin time, German names, plural (ann's own
    // change is in the others' digests).
    let dora = to("Abonnements verwalten");
    assert_eq!(dora.subject, "Tägliche Übersicht: Calendar");
    assert_eq!(
        dora.heading(),
        "3 Änderungen in Calendar seit Sonntag 01:00"
    );
    assert!(
        dora.text.contains(
            "gr24 hat Janitor's Pipe Dream geändert – Startzeit von 00:00 auf 01:00 CET am Di., 24. Nov."
        ),
        "{}",
        dora.text
    );
    assert!(dora.text.contains("gr24 hat Old offsite gelöscht (event)"));
    assert!(dora.text.contains("Zeiten in Europe/Berlin."));
    assert!(dora.html.contains("<html lang=\"de\">"), "{}", dora.html);
    assert!(dora.html.contains("Diese Übersicht abbestellen"));
    assert!(!dora.text.contains("changed") && !dora.text.contains("Manage"));
    // Japanese: one plural form, Tokyo time, Japanese dates.
    let kenji = to("購読の管理");
    assert_eq!(kenji.subject, "毎日のダイジェスト: Calendar");
    assert_eq!(
        kenji.heading(),
        "日曜日 09:00以降、Calendarに3件の変更があります"
    );
    assert!(
        kenji.text.contains(
            "gr24が「Janitor's Pipe Dream」の開始時刻を変更しました: 11月24日(火) 08:00 → 09:00 JST"
        ),
        "{}",
        kenji.text
    );
    assert!(kenji.html.contains("<html lang=\"ja\">"));
    // dora and dieter read the same language, zone and clock: one
    // rendering stored for both (ann's leaves her own change out, kenji
    // reads alone).
    let stored: i64 = nt_bodies::table.count().get_result(&mut c).unwrap();
    assert_eq!(stored, 1);
    let shared: Vec<String> = common::digest::bodies(&mut c)
        .into_iter()
        .filter(|b| b.shared)
        .map(|b| b.text)
        .collect();
    assert_eq!(shared.len(), 2);
    assert!(
        shared.iter().all(|t| t.starts_with("3 Änderungen")),
        "{shared:?}"
    );
}

fn a_singular_reads_singular_in_each_language(db: &TestDb) {
    let mut c = db.conn();
    let (cal, _) = calendar_world(&mut c);
    user(&mut c, "dora", "Europe/Berlin", "de-AT", None);
    user(&mut c, "fleur", "Europe/Paris", "fr-FR", None);
    subscribe(&mut c, at_hour("dora", &cal, 18));
    subscribe(&mut c, at_hour("fleur", &cal, 18));
    // One change in the window: the offsite deleted.
    common::digest::put(
        &mut c,
        &digestd::items::ItemInput {
            deleted: true,
            ..common::digest::item(
                4,
                &cal,
                "Old offsite",
                "2026-11-26T18:00:00Z",
                "gr24",
                "2026-11-22T10:00:00Z",
            )
        },
    );
    tick(&mut c, at("2026-11-22T17:00:00Z"), &mut composer()).unwrap();
    let heads: Vec<String> = requests(&mut c)
        .iter()
        .map(|r| r.heading().to_string())
        .collect();
    assert!(
        heads.contains(&"1 Änderung in Calendar seit Sonntag 01:00".to_string()),
        "{heads:?}"
    );
    assert!(
        heads.contains(&"1 modification dans Calendar depuis dimanche 01:00".to_string()),
        "{heads:?}"
    );
}

/// An env whose config is `config`, with dora (German) subscribed hourly
/// to Calendar at 08:00 and bob's change to it at 08:10; returns the env
/// and the subscription id.
fn german_env(config: &str) -> (Env, String) {
    let env = Env::init();
    std::fs::write(&env.config, config).unwrap();
    env.add_user(
        "dora",
        &["--email", "dora@example.com", "--locale", "de-DE"],
    );
    env.add_user("bob", &["--email", "bob@example.com"]);
    let c = env.add_collection("Calendar");
    let id = env.subscribe_hourly("2026-11-23T08:00:00Z", "dora", &c);
    let mut line = common::cli::mod_line(&c, common::cli::ITEM_A, "edited", "2026-11-23T08:10:00Z");
    line["actor"] = "bob".into();
    env.ok_in(
        &["--now", "2026-11-23T08:20:00Z", "record"],
        &common::cli::lines(&[line]),
    );
    (env, id)
}

fn preview(env: &Env, id: &str, part: &[&str]) -> String {
    let mut args = vec!["--now", "2026-11-23T08:30:00Z", "preview", id];
    args.extend_from_slice(part);
    env.ok(&args)
}

fn overrides_in(env: &Env, files: &[(&str, &str)]) -> String {
    let dir = env.dir.path().join("locales");
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    format!("[i18n]\ndir = {:?}\n", dir.display().to_string())
}

#[test]
fn an_override_changes_one_message_and_a_broken_one_stops_check() {
    let (env, id) = german_env("");
    let shipped = preview(&env, &id, &[]);
    assert!(shipped.contains("Abonnements verwalten"), "{shipped}");
    let config = overrides_in(
        &env,
        &[("de/mine.ftl", "manage-subscriptions = Ihre Abos\n")],
    );
    std::fs::write(&env.config, &config).unwrap();
    let changed = preview(&env, &id, &[]);
    assert!(changed.contains("Ihre Abos:"), "{changed}");
    assert!(!changed.contains("Abonnements verwalten"));
    // Everything else is as shipped.
    assert_eq!(
        changed.replace("Ihre Abos", "Abonnements verwalten"),
        shipped
    );
    env.ok(&["check"]);
    for (file, text, says) in [
        (
            "de/bad.ftl",
            "# ok\nmore = { $count\n",
            "de/bad.ftl:2: syntax error",
        ),
        ("xx/a.ftl", "more = x\n", "unknown locale directory \"xx\""),
        (
            "ja/a.ftl",
            "more = { $anzahl }\n",
            "ja/a.ftl:1: more uses $anzahl",
        ),
        (
            "fr/a.ftl",
            "bonjour = salut\n",
            "no shipped message is called bonjour",
        ),
        (
            "de/ref.ftl",
            "# ok\nmore = und { manage-subscriptionz }\n",
            "de/ref.ftl:2: more: Unknown message: manage-subscriptionz",
        ),
        (
            "fr/loop.ftl",
            "more = { more }\n",
            "fr/loop.ftl:1: more: Cyclical",
        ),
        (
            "de/twice.ftl",
            "more = eins\n\n# später\nmore = zwei\n",
            "de/twice.ftl:4: more is defined twice (first on line 1)",
        ),
    ] {
        let (env, _) = german_env("");
        std::fs::write(&env.config, overrides_in(&env, &[(file, text)])).unwrap();
        for args in [&["check"][..], &["--now", "2026-11-23T08:30:00Z", "tick"]] {
            let out = env.run(args);
            assert_eq!(out.code, 2, "{file}: {out:?}");
            assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
            assert!(out.stderr.contains(says), "{file}: {}", out.stderr);
        }
    }
}

#[test]
fn branding_shows_in_the_email_and_hostile_values_are_refused() {
    let config = "[branding]\nname = \"Acme <Ops>\"\naccent = \"#aa3300\"\nfooter = \"Acme Inc, 1 Main St & Co\"\nlogo_url = \"https://acme.example/logo.png\"\n";
    let (env, id) = german_env(config);
    let html = preview(&env, &id, &["--html"]);
    assert!(
        html.contains("<strong style=\"color:#aa3300;\">Acme &#60;Ops&#62;</strong>"),
        "{html}"
    );
    assert!(
        html.contains("<br>Acme Inc, 1 Main St &#38; Co\n</p>"),
        "{html}"
    );
    assert!(
        html.contains("<img src=\"https://acme.example/logo.png\""),
        "{html}"
    );
    let text = preview(&env, &id, &[]);
    assert!(
        text.ends_with("Acme <Ops>\nAcme Inc, 1 Main St & Co\n"),
        "{text}"
    );
    // No branding set: no header, the built-in colour.
    let (plain, id) = german_env("");
    let html = preview(&plain, &id, &["--html"]);
    assert!(
        !html.contains("<img") && !html.contains("digestd</strong>"),
        "{html}"
    );
    for (bad, says) in [
        (
            "logo_url = \"http://acme.example/l.png\"",
            "[branding] logo_url",
        ),
        ("logo_url = \"javascript:alert(1)\"", "[branding] logo_url"),
        (
            "logo_url = \"https://a.example/x y.png\"",
            "[branding] logo_url",
        ),
        ("accent = \"red\"", "[branding] accent"),
        ("accent = \"#12345g\"", "[branding] accent"),
        ("accent = \"#1234567\"", "[branding] accent"),
        ("accent = \"#123;x\"", "[branding] accent"),
        ("footer = \"line\\nbreak\"", "[branding] footer"),
        ("name = \"\"", "[branding] name"),
        ("name = \"a\\u0007b\"", "[branding] name"),
        // A direction override would turn the rest of a subject around.
        ("name = \"Acme \\u202Eeciovni\"", "[branding] name"),
        ("footer = \"Acme \\u2028Inc\"", "[branding] footer"),
        ("name = \"Acme \\uFFFF\"", "[branding] name"),
    ] {
        std::fs::write(&plain.config, format!("[branding]\n{bad}\n")).unwrap();
        let out = plain.run(&["check"]);
        assert_eq!(out.code, 2, "{bad}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
        assert!(out.stderr.contains(says), "{bad}: {}", out.stderr);
    }
    let long = "x".repeat(501);
    std::fs::write(&plain.config, format!("[branding]\nfooter = \"{long}\"\n")).unwrap();
    assert_eq!(plain.run(&["check"]).code, 2);
    std::fs::write(
        &plain.config,
        format!("[branding]\nfooter = \"{}\"\n", &long[1..]),
    )
    .unwrap();
    assert_eq!(plain.run(&["check"]).code, 0);
}

#[test]
fn bench_compose_takes_a_locale_and_refuses_a_hostile_one() {
    let env = Env::new();
    let toy = [
        "bench",
        "compose",
        "--subs",
        "30",
        "--mods",
        "1000",
        "--collections",
        "2",
        "--items",
        "10",
        "--days",
        "2",
        "--locale",
    ];
    let out = env.run_raw(&[&toy[..], &["de-DE"]].concat(), b"");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("compose rate"), "{out:?}");
    for bad in [
        "x'); DROP TABLE users; --",
        "de DE",
        "日本語",
        &"a".repeat(36),
    ] {
        let out = env.run_raw(&[&toy[..], &[bad]].concat(), b"");
        assert_eq!(out.code, 2, "{bad:?}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
        assert!(out.stderr.contains("--locale"), "{out:?}");
    }
}

backend_tests!(
    each_subscriber_reads_their_own_language,
    a_singular_reads_singular_in_each_language,
);

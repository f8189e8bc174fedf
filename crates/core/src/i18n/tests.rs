use super::overrides::{check, messages};
use super::*;
use fluent_bundle::{FluentArgs, FluentValue};

fn shipped() -> &'static Catalogs {
    catalogs()
}

fn heading(l: Locale, n: usize) -> String {
    shipped().format(
        l,
        "heading-changes",
        &[
            ("count", Arg::Num(n)),
            ("collections", Arg::Str("C")),
            ("since", Arg::Str("S")),
        ],
    )
}

#[test]
fn every_catalogue_has_the_keys_and_variables_of_english_and_no_others() {
    let en = messages(shipped_source(Locale::En)).unwrap();
    assert!(en.len() > 50, "{} English messages", en.len());
    for l in &Locale::ALL[1..] {
        let mine = messages(shipped_source(*l)).unwrap_or_else(|e| panic!("{l:?}: {e:?}"));
        for (key, (_, vars)) in &en {
            let (_, have) = mine
                .get(key)
                .unwrap_or_else(|| panic!("{} lacks {key}", l.tag()));
            assert_eq!(have, vars, "{}: {key} uses other variables", l.tag());
        }
        for key in mine.keys() {
            assert!(
                en.contains_key(key),
                "{} has {key}, English does not",
                l.tag()
            );
        }
    }
}

#[test]
fn plurals_follow_the_language() {
    assert_eq!(heading(Locale::En, 1), "1 change in C since S");
    assert_eq!(heading(Locale::En, 2), "2 changes in C since S");
    assert_eq!(heading(Locale::De, 1), "1 Änderung in C seit S");
    assert_eq!(heading(Locale::De, 2), "2 Änderungen in C seit S");
    // French `one` covers 0 and 1.
    assert_eq!(heading(Locale::Fr, 0), "0 modification dans C depuis S");
    assert_eq!(heading(Locale::Fr, 1), "1 modification dans C depuis S");
    assert_eq!(heading(Locale::Fr, 2), "2 modifications dans C depuis S");
    assert_eq!(heading(Locale::Es, 2), "2 cambios en C desde S");
    // Japanese has only `other`.
    assert_eq!(heading(Locale::Ja, 1), "S以降、Cに1件の変更があります");
    assert_eq!(heading(Locale::Ja, 7), "S以降、Cに7件の変更があります");
}

#[test]
fn the_plural_selector_comes_from_the_catalogues_language() {
    // Polish: one, few, many, other; a catalogue made only for this test.
    let src = "files = { $n ->\n    [one] { $n } plik\n    [few] { $n } pliki\n    [many] { $n } plików\n   *[other] { $n } pliku\n}\n";
    let pl = Catalog::new("pl", src).unwrap();
    let f = |n: usize| {
        let mut out = String::new();
        pl.write(&mut out, "files", &[("n", Arg::Num(n))], None);
        out
    };
    assert_eq!(f(1), "1 plik");
    assert_eq!(f(3), "3 pliki");
    assert_eq!(f(22), "22 pliki");
    assert_eq!(f(5), "5 plików");
    assert_eq!(f(12), "12 plików");
    // The same source read as English selects by English rules.
    let en = Catalog::new("en", src).unwrap();
    let mut out = String::new();
    en.write(&mut out, "files", &[("n", Arg::Num(3))], None);
    assert_eq!(out, "3 pliku");
}

#[test]
fn a_missing_message_falls_back_to_english_then_to_its_key() {
    let c = Catalogs::with(&[]).unwrap();
    // Remove nothing from the shipped ones; build a German catalogue
    // without `more` by hand to see the fallback.
    let mut langs = Vec::new();
    for l in Locale::ALL {
        let src = if l == Locale::De {
            "someone = Jemand\n"
        } else {
            shipped_source(l)
        };
        langs.push(Catalog::new(l.tag(), src).unwrap());
    }
    let thin = Catalogs {
        langs,
        names: c.names.clone(),
    };
    assert_eq!(thin.text(Locale::De, "someone"), "Jemand");
    assert_eq!(
        thin.format(Locale::De, "more", &[("count", Arg::Num(3))]),
        "and 3 more"
    );
    assert!(!thin.has_own(Locale::De, "more"));
    assert_eq!(thin.format(Locale::De, "no-such-key", &[]), "no-such-key");
    assert_eq!(thin.text(Locale::Ja, "no-such-key"), "no-such-key");
    // A variable not given is shown by name, not dropped.
    assert_eq!(c.format(Locale::En, "more", &[]), "and {$count} more");
}

#[test]
fn hostile_tags_resolve_to_english_or_their_language() {
    assert_eq!(Locale::resolve("pt-BR"), Locale::Pt);
    assert_eq!(Locale::resolve("de-AT"), Locale::De);
    assert_eq!(Locale::resolve("DE_at"), Locale::De);
    assert_eq!(Locale::resolve("en-US"), Locale::En);
    assert_eq!(Locale::resolve("ja"), Locale::Ja);
    for bad in [
        "",
        "xx-YY",
        "../../etc",
        "../de",
        "de/../../etc/passwd",
        "dé-DE",
        "日本語",
        "\u{0}de",
        "-de",
    ] {
        assert_eq!(Locale::resolve(bad), Locale::En, "{bad:?}");
    }
    assert_eq!(Locale::resolve(&"de".repeat(150)), Locale::En);
    assert_eq!(
        Locale::resolve(&format!("fr-{}", "x".repeat(300))),
        Locale::Fr
    );
    assert_eq!(Locale::exact("de-DE"), None);
    assert_eq!(Locale::exact("../de"), None);
}

/// The shipped language `header` asks for most, English when none.
fn preferred(header: &str) -> Locale {
    Locale::accepted(header).map_or(Locale::En, |(l, _)| l)
}

#[test]
fn accept_language_picks_the_preferred_shipped_language() {
    assert_eq!(preferred("de-DE,de;q=0.9,en;q=0.8"), Locale::De);
    assert_eq!(preferred("xx, ja;q=0.5, fr;q=0.7"), Locale::Fr);
    assert_eq!(preferred("pt;q=0, es"), Locale::Es);
    assert_eq!(preferred(""), Locale::En);
    assert_eq!(preferred("*;q=1, de;q=bad"), Locale::En);
}

#[test]
fn names_of_days_and_months_are_in_the_language() {
    let c = shipped();
    assert_eq!(c.names(Locale::En).weekdays[0], "Mon");
    assert_eq!(c.names(Locale::En).months[10], "Nov");
    assert_eq!(c.names(Locale::En).weekdays_long[6], "Sunday");
    assert_eq!(c.names(Locale::De).weekdays[0], "Mo.");
    assert_eq!(c.names(Locale::Fr).months[1], "févr.");
    assert_eq!(c.names(Locale::Ja).weekdays[0], "月");
    assert_eq!(c.names(Locale::Ja).months[10], "11月");
}

#[test]
fn a_marked_variable_is_found_in_simple_and_selected_messages() {
    let c = shipped();
    let mut out = String::from(">");
    let at = c.write(
        &mut out,
        Locale::De,
        "line-added",
        &[
            ("who", Arg::Str("ana")),
            ("title", Arg::Str("Plan")),
            ("collection", Arg::Str("Ops")),
        ],
        Some("title"),
    );
    assert_eq!(out, ">ana hat Plan zu Ops hinzugefügt");
    let (a, b) = at.unwrap();
    assert_eq!(&out[a..b], "Plan");
    let mut out = String::new();
    let at = c.write(
        &mut out,
        Locale::En,
        "people-more",
        &[
            ("first", Arg::Str("a")),
            ("second", Arg::Str("b")),
            ("rest", Arg::Num(1)),
        ],
        Some("second"),
    );
    assert_eq!(out, "a, b and 1 other");
    assert_eq!(at, Some((3, 4)));
}

#[test]
fn overrides_are_checked_against_the_shipped_messages() {
    assert!(check(Locale::De, "de/x.ftl", "more = und noch { $count }\n").is_ok());
    let e = check(Locale::De, "de/x.ftl", "# c\nmore = und { $anzahl }\n").unwrap_err();
    assert!(e.starts_with("de/x.ftl:2: more uses $anzahl"), "{e}");
    let e = check(Locale::De, "de/x.ftl", "\n\nmore = { $count\n").unwrap_err();
    assert!(e.starts_with("de/x.ftl:3: syntax error"), "{e}");
    let e = check(Locale::Ja, "ja/x.ftl", "greeting = hi\n").unwrap_err();
    assert!(e.contains("no shipped message is called greeting"), "{e}");
    let c = Catalogs::with(&[(Locale::De, "more = und noch { $count }\n")]).unwrap();
    assert_eq!(
        c.format(Locale::De, "more", &[("count", Arg::Num(2))]),
        "und noch 2"
    );
    assert_eq!(
        c.format(Locale::Fr, "more", &[("count", Arg::Num(2))]),
        "et 2 de plus"
    );
}

#[test]
fn every_message_formats_without_errors_in_every_language() {
    // Each message with each of its variables given: no unknown reference
    // (a misspelt `{ signup-confirm-button }`), no variable left as
    // `{$name}`.
    let c = shipped();
    for l in Locale::ALL {
        let cat = &c.langs[l as usize];
        for (key, (_, vars)) in messages(shipped_source(l)).unwrap() {
            let msg = cat.bundle.get_message(&key).unwrap();
            let mut args = FluentArgs::new();
            for v in &vars {
                args.set(v.as_str(), FluentValue::from(2));
            }
            let mut errors = Vec::new();
            let out = cat
                .bundle
                .format_pattern(msg.value().unwrap(), Some(&args), &mut errors);
            assert!(errors.is_empty(), "{}: {key}: {errors:?}", l.tag());
            assert!(!out.contains('{'), "{}: {key}: {out}", l.tag());
        }
    }
}

#[test]
fn the_sign_up_sentences_name_the_confirm_button_in_their_language() {
    let c = shipped();
    for l in Locale::ALL {
        let button = c.text(l, "signup-confirm-button");
        for key in ["signup-open", "signup-sent"] {
            let said = c.say(l, key);
            assert!(said.contains(button), "{}: {key}: {said}", l.tag());
        }
    }
    assert_eq!(
        c.say(Locale::De, "signup-open"),
        "Zum Bestätigen öffnen Sie diesen Link und klicken Sie auf „Bestätigen“:"
    );
    // An operator's new button text is named by the sentence too.
    let o = Catalogs::with(&[(Locale::Fr, "signup-confirm-button = Valider\n")]).unwrap();
    assert_eq!(
        o.say(Locale::Fr, "signup-open"),
        "Pour confirmer, ouvrez ce lien et cliquez sur « Valider » :"
    );
}

#[test]
fn hostile_accept_language_headers_ask_for_nothing() {
    let long = format!("de, {}", "x;q=0.1, ".repeat(100));
    assert!(long.len() > MAX_ACCEPT_LANGUAGE);
    for bad in [
        "de;q=1.5",
        "de;q=-0.5",
        "de;q=NaN",
        "de;q=inf",
        "de;q=",
        "de<script>",
        "de-DE\u{0}",
        "../de",
        "de/../fr",
        ";;;,,,;q=1",
        long.as_str(),
    ] {
        assert_eq!(Locale::accepted(bad), None, "{bad:?}");
    }
    // Past the first 32 entries nothing is read.
    let late = format!("{}de", "xx, ".repeat(40));
    assert_eq!(Locale::accepted(&late), None);
    assert_eq!(
        Locale::accepted("en-GB;q=0.8, fr-CA;q=0.9"),
        Some((Locale::Fr, "fr-CA"))
    );
    assert_eq!(Locale::accepted("DE-at"), Some((Locale::De, "DE-at")));
}

#[test]
fn the_operators_pages_words_are_read_in_every_language() {
    // `admin.ftl` is part of every shipped catalogue, so the completeness
    // test above covers it: each language has its own words for them.
    let c = shipped();
    let en = messages(shipped_source(Locale::En)).unwrap();
    let admin: Vec<&String> = en.keys().filter(|k| k.starts_with("admin-")).collect();
    assert!(admin.len() > 100, "{} admin messages", admin.len());
    for l in Locale::ALL {
        for key in &admin {
            assert!(c.has_own(l, key), "{} lacks {key}", l.tag());
        }
    }
    assert_eq!(c.text(Locale::De, "admin-nav-requests"), "Aufträge");
    assert_eq!(
        c.format(
            Locale::Ja,
            "admin-delay-min",
            &[("min", Arg::Num(3)), ("s", Arg::Num(5))]
        ),
        "3分5秒"
    );
    assert_eq!(
        c.format(
            Locale::Fr,
            "admin-ago",
            &[("at", Arg::Str("T")), ("delay", Arg::Str("2 s"))]
        ),
        "T (il y a 2 s)"
    );
}

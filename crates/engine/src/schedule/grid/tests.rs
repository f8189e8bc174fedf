//! Unit tests of `grid`.

use super::*;

#[test]
fn buckets_and_candidates_wrap_around_the_week() {
    let t = chrono::NaiveDate::from_ymd_opt(2026, 11, 22)
        .unwrap()
        .and_hms_opt(23, 30, 0)
        .unwrap();
    assert_eq!(Bucket::of(t), Bucket::new(6, 23).unwrap()); // a Sunday
    assert_eq!(Bucket::of(t).index(), 167);
    assert!(Bucket::new(7, 0).is_none() && Bucket::new(0, 24).is_none());
    let mut g = WeekGrid::default();
    g.insert(Bucket::new(0, 0).unwrap(), SubscriptionId(1));
    g.insert(Bucket::new(6, 23).unwrap(), SubscriptionId(2));
    g.insert(Bucket::new(3, 12).unwrap(), SubscriptionId(3));
    let got: Vec<i64> = g
        .candidates(Bucket::new(6, 22).unwrap(), Bucket::new(0, 0).unwrap())
        .map(|s| s.0)
        .collect();
    assert_eq!(got, [2, 1]);
    assert_eq!(
        g.candidates(Bucket::new(0, 0).unwrap(), Bucket::new(0, 0).unwrap())
            .count(),
        0
    );
    assert_eq!(g.peak().1, 1);
    let text = g.to_text("t");
    assert!(
        text.contains("peak: Mon 00:00 with 1 of 3 digests"),
        "{text}"
    );
    assert!(g.to_svg("a <b>", GridTime::Server).contains("a &lt;b&gt;"));
}

/// Parses `svg` as XML (tags matched, attributes and references valid,
/// one root) and returns its text, references resolved.
fn parse(svg: &str) -> String {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_str(svg);
    let dec = r.decoder();
    let (mut depth, mut roots, mut text) = (0i32, 0, String::new());
    loop {
        match r
            .read_event()
            .unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"))
        {
            Event::Start(e) | Event::Empty(e) if depth == 0 && roots > 0 => {
                panic!("a second root {:?}", e.name())
            }
            Event::Start(e) => {
                for a in e.attributes() {
                    a.expect("a valid attribute")
                        .decoded_and_normalized_value(quick_xml::XmlVersion::Implicit1_0, dec)
                        .unwrap();
                }
                roots += usize::from(depth == 0);
                depth += 1;
            }
            Event::Empty(e) => {
                for a in e.attributes() {
                    a.expect("a valid attribute")
                        .decoded_and_normalized_value(quick_xml::XmlVersion::Implicit1_0, dec)
                        .unwrap();
                }
                roots += usize::from(depth == 0);
            }
            Event::End(_) => depth -= 1,
            Event::Text(t) => text.push_str(&t.decode().unwrap()),
            Event::GeneralRef(g) => {
                let name = g.decode().unwrap().into_owned();
                text.push_str(match name.as_str() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unknown entity {other}"),
                });
            }
            Event::Eof => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((depth, roots), (0, 1), "one closed root");
    assert!(
        svg.chars()
            .all(|c| c == '\t' || c == '\n' || c == '\r' || c >= ' '),
        "no character XML forbids"
    );
    text
}

fn sample() -> WeekGrid {
    let mut g = WeekGrid::default();
    for k in 0..8 {
        g.insert(Bucket::new(0, 9).unwrap(), SubscriptionId(k));
    }
    g.insert(Bucket::new(2, 18).unwrap(), SubscriptionId(9));
    g.insert_empty(Bucket::new(2, 18).unwrap());
    g.insert_empty(Bucket::new(4, 7).unwrap());
    g.insert_empty(Bucket::new(4, 7).unwrap());
    g
}

#[test]
fn the_svg_is_well_formed_with_axes_a_legend_and_empty_runs_apart() {
    let g = sample();
    let svg = g.to_svg("digests of asha", GridTime::Local);
    let text = parse(&svg);
    for want in [
        "digests of asha",
        "Digests per hour of the week, local time",
        "hour of the day (local time)",
        "digests per hour:",
        "Mon 09:00 local time: 8 digests, 0 empty runs",
        "Wed 18:00 local time: 1 digests, 1 empty runs",
        "Fri 07:00 local time: 0 digests, 2 empty runs",
        "3 empty runs (ran, nothing to send) not counted",
        "peak: Mon 09:00 with 8 of 9 digests (local time)",
    ] {
        assert!(text.contains(want), "{want:?} in {text}");
    }
    // The scale: 0, 2, 4, 6, 8 (a quarter of the peak at a time), each
    // with its swatch; the darkest is the peak's colour.
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    for n in [0, 2, 4, 6, 8] {
        assert!(legend.contains(&format!(">{n}</text>")), "{n} in {legend}");
    }
    assert!(legend.contains(&shade(8, 8)) && legend.contains(&shade(0, 8)));
    // Empty runs are grey dots, one per bucket that has any; a bucket
    // of empty runs alone stays white (not load).
    assert_eq!(svg.matches("class=\"empty\"").count(), 2);
    assert!(svg.contains(&format!(
        "fill=\"{}\" stroke=\"rgb(221,221,221)\"><title>Fri 07:00",
        shade(0, 8)
    )));
    assert!(svg.contains(">day</text>"));
    assert_eq!(svg.matches("<rect x=").count(), 168 + 5);
    let server = parse(&g.to_svg("t", GridTime::Server));
    assert!(server.contains("hour of the day (server time (UTC))"));
}

#[test]
fn the_svg_escapes_hostile_titles_and_drops_what_xml_cannot_hold() {
    let g = WeekGrid::default();
    let hostile = "<script>alert('x')</script> & \"q\" ]]> \u{1}\u{7}\u{FFFF}";
    let svg = g.to_svg(hostile, GridTime::Server);
    let text = parse(&svg);
    assert!(
        text.contains("<script>alert('x')</script> & \"q\" ]]> "),
        "{text}"
    );
    assert!(!svg.contains("<script"));
    assert!(!svg.contains('\u{1}') && !svg.contains('\u{FFFF}'));
    // An empty grid: a scale of one step, nothing empty, a zero peak.
    assert!(text.contains("0 empty runs"), "{text}");
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    assert_eq!(legend.matches("<rect").count(), 1);
}

#[test]
fn legend_steps_do_not_repeat() {
    assert_eq!(legend_steps(0), [0]);
    assert_eq!(legend_steps(1), [0, 1]);
    assert_eq!(legend_steps(2), [0, 1, 2]);
    assert_eq!(legend_steps(8), [0, 2, 4, 6, 8]);
    assert_eq!(legend_steps(10), [0, 3, 5, 8, 10]);
    assert!(GridTime::parse("local\r\nX").is_err());
    assert_eq!(GridTime::parse("utc").unwrap(), GridTime::Server);
}

/// Words whose days differ in length, and whose sentences say where they
/// came from.
struct Other;

impl GridWords for Other {
    fn day(&self, d: usize) -> std::borrow::Cow<'_, str> {
        ["Mo.", "Dienstag", "Mi.", "Do.", "Fr.", "Sa.", "So."][d].into()
    }
    fn time(&self, _: GridTime) -> std::borrow::Cow<'_, str> {
        "Zeit <x>".into()
    }
    fn subtitle(&self, time: &str) -> String {
        format!("sub {time}")
    }
    fn cell(&self, day: &str, hour: u8, time: &str, n: usize, e: usize) -> String {
        format!("cell {day} {hour} {time} {n} {e}")
    }
    fn dot(&self, e: usize) -> String {
        format!("dot {e}")
    }
    fn hour_axis(&self, time: &str) -> String {
        format!("hours {time}")
    }
    fn day_axis(&self) -> std::borrow::Cow<'_, str> {
        "days".into()
    }
    fn scale(&self) -> std::borrow::Cow<'_, str> {
        "scale".into()
    }
    fn empty_runs(&self, n: usize) -> String {
        format!("empty {n}")
    }
    fn peak(&self, day: &str, hour: u8, n: usize, total: usize) -> String {
        format!("peak {day} {hour} {n}/{total}")
    }
    fn total(&self) -> std::borrow::Cow<'_, str> {
        "gesamt".into()
    }
}

#[test]
fn a_grid_in_other_words_says_every_word_of_theirs_and_keeps_its_columns() {
    let mut g = WeekGrid::default();
    g.insert(Bucket::new(1, 3).unwrap(), SubscriptionId(1));
    g.insert_empty(Bucket::new(6, 0).unwrap());
    let text = g.to_text_in("T", &Other);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1].trim_end(),
        format!(
            "{:10}{}   gesamt",
            "",
            (0..24).map(|h| format!(" {h:>2}")).collect::<String>()
        )
    );
    assert!(lines[2].starts_with(&format!("{:10}  .", "Mo.")), "{text}");
    assert!(
        lines[3].starts_with(&format!("{:10}  .", "Dienstag")),
        "{text}"
    );
    assert!(text.contains("peak Dienstag 3 1/1\nempty 1\n"), "{text}");
    // English stays `digestd grid`'s.
    assert_eq!(g.to_text("T"), g.to_text_in("T", &English));
    assert!(g.to_text("T").contains("\nTue  "));
    let svg = g.to_svg_in("T", GridTime::Local, &Other);
    for want in [
        ">sub Zeit &lt;x&gt;</text>",
        "<title>cell Dienstag 3 Zeit &lt;x&gt; 1 0</title>",
        "<title>dot 1</title>",
        ">hours Zeit &lt;x&gt;</text>",
        ">days</text>",
        ">scale</text>",
        ">empty 1</text>",
        ">peak Dienstag 3 1/1 (Zeit &lt;x&gt;)</text>",
        ">So.</text>",
    ] {
        assert!(svg.contains(want), "{want:?} in {svg}");
    }
    assert!(!svg.contains("Mon") && !svg.contains("digests"), "{svg}");
    assert_eq!(
        g.to_svg("T", GridTime::Local),
        g.to_svg_in("T", GridTime::Local, &English)
    );
}

/// Days named in a wide script: the hours stay in their columns.
struct Wide;

impl GridWords for Wide {
    fn day(&self, d: usize) -> std::borrow::Cow<'_, str> {
        ["月", "火曜", "水", "木", "金", "土", "日"][d].into()
    }
    fn time(&self, t: GridTime) -> std::borrow::Cow<'_, str> {
        English.time(t)
    }
    fn subtitle(&self, time: &str) -> String {
        English.subtitle(time)
    }
    fn cell(&self, day: &str, hour: u8, time: &str, n: usize, e: usize) -> String {
        English.cell(day, hour, time, n, e)
    }
    fn dot(&self, e: usize) -> String {
        English.dot(e)
    }
    fn hour_axis(&self, time: &str) -> String {
        English.hour_axis(time)
    }
    fn day_axis(&self) -> std::borrow::Cow<'_, str> {
        English.day_axis()
    }
    fn scale(&self) -> std::borrow::Cow<'_, str> {
        English.scale()
    }
    fn empty_runs(&self, n: usize) -> String {
        English.empty_runs(n)
    }
    fn peak(&self, day: &str, hour: u8, n: usize, total: usize) -> String {
        English.peak(day, hour, n, total)
    }
    fn total(&self) -> std::borrow::Cow<'_, str> {
        "合計".into()
    }
}

#[test]
fn wide_day_names_keep_the_hours_in_their_columns() {
    let mut g = WeekGrid::default();
    g.insert(Bucket::new(1, 3).unwrap(), SubscriptionId(1));
    let text = g.to_text_in("T", &Wide);
    let lines: Vec<&str> = text.lines().collect();
    // "火曜" is four columns wide; "月" two, padded by two spaces: each
    // day's first cell stands under the header's hour 0.
    let at = |line: &str, c: char| columns(&line[..line.find(c).unwrap()]);
    assert_eq!(at(lines[1], '0'), 8, "{text}");
    assert_eq!(at(lines[2], '.'), 8, "{text}");
    assert_eq!(at(lines[3], '.'), 8, "{text}");
    assert!(lines[2].starts_with("月    "), "{text}");
    assert!(lines[3].starts_with("火曜  "), "{text}");
    assert_eq!(columns("Mon"), 3);
    assert_eq!(columns("日曜日"), 6);
    assert_eq!(columns("ｶﾀ"), 2, "half-width katakana is narrow");
}

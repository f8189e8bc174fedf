//! The seen-mark filter's unit tests.

use super::*;
use crate::digest::compose::ItemChange;
use crate::ids::CollectionId;
use crate::modlog::Action;

fn change(item: &str, first: i64, last: i64) -> Arc<ItemChange> {
    Arc::new(ItemChange {
        item_uuid: item.into(),
        collection: CollectionId(1),
        kind: "note".into(),
        title: item.into(),
        action: Action::Edited,
        actors: vec![],
        first_at: DateTime::from_timestamp(first, 0).unwrap(),
        last_at: DateTime::from_timestamp(last, 0).unwrap(),
        first_id: first,
        changes: vec![],
        url: None,
    })
}

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap()
}

/// The list `me` gets of the shared `listed`.
fn list_for(m: &mut SeenMarks, me: i64, listed: &Arc<Listed>) -> Arc<Listed> {
    let src = Source::Ready(Content::Changes(listed.clone()));
    match m.apply(PartyId(me), (src, true)) {
        (Source::Ready(Content::Changes(l)), true) => l,
        _ => panic!("not a shared list"),
    }
}

fn titles(l: &Listed) -> Vec<&str> {
    l.items.iter().map(|c| c.item_uuid.as_str()).collect()
}

#[test]
fn an_item_leaves_only_when_its_last_change_is_at_or_before_the_mark() {
    let listed = Arc::new(Listed {
        items: vec![
            change("a", 10, 20),
            change("b", 10, 30),
            change("c", 10, 40),
        ],
        rest: 5,
        ..Listed::default()
    });
    let mut m = SeenMarks::default();
    let marks = [("a", 20), ("b", 25), ("c", 5)];
    let marks = marks.map(|(i, s)| (i.to_string(), at(s)));
    m.marks.insert(PartyId(7), marks.into());
    let out = list_for(&mut m, 7, &listed);
    assert_eq!(titles(&out), ["b", "c"]);
    assert_eq!((out.seen, out.rest, out.len()), (1, 5, 7));
    // Someone without marks, or marks that leave nothing out: shared.
    assert!(Arc::ptr_eq(&list_for(&mut m, 8, &listed), &listed));
    // Marks are read again with each chunk.
    m.begin_chunk(&[]);
    m.marks.insert(PartyId(7), vec![("b".into(), at(29))]);
    assert!(Arc::ptr_eq(&list_for(&mut m, 7, &listed), &listed));
}

#[test]
fn the_same_items_left_out_of_the_same_list_are_one_list() {
    let listed = Arc::new(Listed::whole(vec![
        change("a", 10, 20),
        change("b", 10, 30),
        change("c", 10, 40),
    ]));
    let mut m = SeenMarks::default();
    // 1 and 2 leave out a (marks at different times, the same effect);
    // 3 leaves out b; 4 leaves out a, and c only past the first two.
    let marks: [(i64, &[(&str, i64)]); 4] = [
        (1, &[("a", 20)]),
        (2, &[("a", 50), ("b", 5)]),
        (3, &[("b", 30)]),
        (4, &[("a", 60), ("c", 60)]),
    ];
    let mark = |m: &mut SeenMarks| {
        for (p, ms) in marks {
            let ms = ms.iter().map(|(i, s)| (i.to_string(), at(*s)));
            m.marks.insert(PartyId(p), ms.collect());
        }
    };
    mark(&mut m);
    let one = list_for(&mut m, 1, &listed);
    assert!(Arc::ptr_eq(&one, &list_for(&mut m, 2, &listed)));
    let three = list_for(&mut m, 3, &listed);
    assert!(!Arc::ptr_eq(&one, &three));
    assert_eq!(
        (titles(&one), titles(&three)),
        (vec!["b", "c"], vec!["a", "c"])
    );
    assert_eq!(titles(&list_for(&mut m, 4, &listed)), ["b"]);
    // Another list, the same items left out: a list of its own.
    let other = Arc::new((*listed).clone());
    assert!(!Arc::ptr_eq(&one, &list_for(&mut m, 1, &other)));
    // A new chunk forgets the marks, and keeps the lists for the
    // tick: the same items left out are the same list again. Only the
    // first two are filtered: 4 leaves out a alone, as 1 does.
    m.begin_chunk(&[]);
    assert!(m.marks.is_empty() && m.mine.is_empty());
    mark(&mut m);
    assert!(Arc::ptr_eq(&one, &list_for(&mut m, 1, &listed)));
    m.first = Some(2);
    let four = list_for(&mut m, 4, &listed);
    assert_eq!((titles(&four), four.seen), (vec!["b", "c"], 1));
    assert!(Arc::ptr_eq(&four, &one));
}

#[test]
fn a_mark_read_twice_leaves_its_item_out_once() {
    let listed = Arc::new(Listed::whole(vec![
        change("a", 10, 20),
        change("b", 10, 30),
    ]));
    let mut m = SeenMarks::default();
    // A daily and a weekly window of one collection both read it.
    let twice = vec![("a".to_string(), at(25)), ("a".to_string(), at(25))];
    m.marks.insert(PartyId(7), twice);
    let out = list_for(&mut m, 7, &listed);
    assert_eq!((titles(&out), out.seen), (vec!["b"], 1));
}

#[test]
fn a_list_naming_an_item_twice_leaves_out_each_seen_one() {
    // Not made by the window today; the filter must not depend on it.
    let listed = Arc::new(Listed::whole(vec![
        change("a", 10, 20),
        change("b", 10, 30),
        change("a", 11, 40),
    ]));
    let mut m = SeenMarks::default();
    m.marks.insert(PartyId(7), vec![("a".into(), at(45))]);
    let out = list_for(&mut m, 7, &listed);
    assert_eq!((titles(&out), out.seen), (vec!["b"], 2));
    assert!(m.index.values().all(|(_, i)| i.is_none()));
}

/// Every combination of marks on six items, with and without a cap: the
/// lookup by the list's index leaves out what reading the whole list
/// against the marks does.
#[test]
fn the_index_and_the_whole_list_agree() {
    let items: Vec<_> = (0..6)
        .map(|i| change(&format!("i{i}"), 10 + i, 20 + 10 * i))
        .collect();
    let listed = Listed::whole(items);
    let mut index = Index::new();
    for (i, c) in (0u32..).zip(&listed.items) {
        index.insert(c.item_uuid.clone(), i);
    }
    let mut m = SeenMarks::default();
    let mut left_out_some = 0;
    for first in [None, Some(0), Some(2), Some(5)] {
        m.first = first;
        for set in 0u32..(1 << 6) {
            // Marks on the set's items, at a time that sees some changes
            // and not others, and one on an item not in the list.
            let mut marks: Vec<(String, DateTime<Utc>)> = (0..6)
                .filter(|i| set & (1 << i) != 0)
                .map(|i| (format!("i{i}"), at(15 + 17 * i64::from(i % 4))))
                .collect();
            marks.push(("elsewhere".into(), at(1_000)));
            m.marks.insert(PartyId(1), marks);
            let by_index = m.left_out(PartyId(1), &listed, &listed, Some(&index));
            let by_list = m.left_out(PartyId(1), &listed, &listed, None);
            assert_eq!(by_index, by_list, "first {first:?}, set {set:#b}");
            left_out_some += usize::from(!by_index.is_empty());
        }
    }
    assert!(left_out_some > 64, "{left_out_some}");
}

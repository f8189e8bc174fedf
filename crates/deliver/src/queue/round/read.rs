//! A claimed round read whole: its rows, their requests, bodies and
//! recipients' styles, in a few statements.

use super::*;
use crate::db::schema::{collections, subscriptions};

/// The rows claimed under `tokens`, with their requests and senders.
///
/// On PostgreSQL in a transaction that prefers index look-ups: a round is
/// a few thousand rows, requests and bodies read by key, but at the
/// default cost of a random read the planner scanned every request and
/// body ever written instead (18 ms instead of 6 for 2,000 bodies with
/// 150,000 in the table, and growing with the history).
pub(super) fn load(conn: &mut DbConn, tokens: &[String]) -> Result<Round> {
    conn.with_index_lookups(|c| read_round(c, tokens))
}

/// [`load`]'s reads.
fn read_round(conn: &mut DbConn, tokens: &[String]) -> Result<Round> {
    let rows = claimed_rows(conn, tokens)?;
    if rows.is_empty() {
        return Ok(Round {
            rows,
            reqs: HashMap::new(),
            names: HashMap::new(),
            styles: HashMap::new(),
            codes: HashMap::new(),
            lists: HashMap::new(),
        });
    }
    let reqs = requests(conn, &rows)?;
    let names = sender_names(conn, &rows)?;
    let styles = load_styles(conn, &rows)?;
    let codes = super::super::member::load_codes(conn, &rows, &reqs)?;
    let lists = load_lists(conn, &reqs)?;
    Ok(Round {
        rows,
        reqs,
        names,
        styles,
        codes,
        lists,
    })
}

/// The rows claimed under `tokens`, in order of sender, recipient,
/// channel and request.
fn claimed_rows(conn: &mut DbConn, tokens: &[String]) -> Result<Vec<Row>> {
    Ok(nt_queue::table
        .inner_join(nt_requests::table)
        .left_join(parties::table.on(parties::id.eq(nt_queue::party_to)))
        .filter(nt_queue::claimed_by.eq_any(tokens))
        .select((
            nt_queue::request_id,
            nt_queue::party_to,
            nt_queue::channel,
            nt_queue::address,
            nt_queue::retry_count,
            nt_requests::max_retries,
            nt_requests::party_from,
            // A party deleted by hand after its rows were expanded (there
            // is no foreign key) is still written to at the row's address.
            // A row to an address (a negative key) is to no party: no name.
            diesel::dsl::sql::<Text>(
                "COALESCE(parties.name, CASE WHEN nt_queue.party_to < 0 THEN '' \
                 ELSE 'party ' || nt_queue.party_to END)",
            ),
            nt_requests::expand_group,
            nt_requests::channels,
            diesel::dsl::sql::<diesel::sql_types::Bool>(
                "(nt_requests.kind = 'notification' AND NOT nt_requests.urgent)",
            ),
            diesel::dsl::sql::<diesel::sql_types::Bool>("(nt_requests.kind = 'digest')"),
            nt_requests::subscription_id,
        ))
        .order((
            nt_requests::party_from.asc(),
            nt_queue::party_to.asc(),
            nt_queue::channel.asc(),
            nt_queue::request_id.asc(),
        ))
        .load(conn)?)
}

/// The claimed rows' requests, by id (bound as one parameter).
/// Email needs the text and HTML bodies, XMPP and SMS their own texts
/// (and the text as a fallback), email a forward digest's calendar too:
/// each query reads only what its channels
/// need, so an email round does not carry a chat body it never sends.
/// A digest's text, HTML and chat text may be a shared rendering
/// (`nt_bodies`), read once however many requests share it.
fn requests(conn: &mut DbConn, rows: &[Row]) -> Result<HashMap<i64, Req>> {
    let mut reqs: HashMap<i64, Req> = HashMap::new();
    for email in [true, false] {
        let mut ids: Vec<i64> = rows
            .iter()
            .filter(|r| (r.channel == Channel::Email.as_str()) == email)
            .map(|r| r.request_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            continue;
        }
        let these = crate::db::column_in(conn, "nt_requests.request_id", ids);
        let loaded: Vec<ReqRow> = nt_requests::table
            .inner_join(nt_messages::table)
            .filter(these)
            .select((
                nt_requests::request_id,
                nt_requests::subject,
                nt_messages::message,
                body("nt_messages.message_html", email),
                body("nt_messages.message_chat", !email),
                body("nt_messages.message_sms", !email),
                nt_requests::request_date,
                nt_requests::unsubscribe_url,
                nt_messages::body_id,
                nt_messages::manage_url,
                nt_messages::full_url,
                body("nt_messages.message_webhook", !email),
                nt_requests::subscription_id,
                body("nt_messages.calendar", email),
            ))
            .load(conn)?;
        let shared = shared_bodies(conn, &loaded, email)?;
        // A request on email and another channel is in both: the second
        // read adds its chat and SMS texts.
        for r in loaded {
            let r = r.into_req(&shared);
            match reqs.get_mut(&r.id) {
                Some(q) => {
                    (q.message_chat, q.message_sms, q.message_webhook) =
                        (r.message_chat, r.message_sms, r.message_webhook)
                }
                None => {
                    reqs.insert(r.id, r);
                }
            }
        }
    }
    Ok(reqs)
}

/// The names of the rows' senders, by party id.
fn sender_names(conn: &mut DbConn, rows: &[Row]) -> Result<HashMap<i64, String>> {
    let mut senders: Vec<i64> = rows.iter().map(|r| r.party_from).collect();
    senders.sort_unstable();
    senders.dedup();
    Ok(parties::table
        .filter(parties::id.eq_any(&senders))
        .select((parties::id, parties::name))
        .load::<(i64, String)>(conn)?
        .into_iter()
        .collect())
}

/// A body column a read needs, or NULL in its place.
fn body(column: &'static str, needed: bool) -> diesel::expression::SqlLiteral<Nullable<Text>> {
    diesel::dsl::sql::<Nullable<Text>>(if needed { column } else { "NULL" })
}

/// A request as read, its bodies its own or, with a `body_id`, a shared
/// rendering's ([`shared_bodies`]).
#[derive(Queryable)]
struct ReqRow {
    id: i64,
    subject: String,
    message: String,
    message_html: Option<String>,
    message_chat: Option<String>,
    message_sms: Option<String>,
    request_date: NaiveDateTime,
    unsubscribe_url: Option<String>,
    body_id: Option<i64>,
    manage_url: Option<String>,
    full_url: Option<String>,
    message_webhook: Option<String>,
    subscription_id: Option<i64>,
    calendar: Option<String>,
}

/// A shared rendering's text, HTML, chat text and calendar.
type Shared = (
    Arc<str>,
    Option<Arc<str>>,
    Option<Arc<str>>,
    Option<Arc<str>>,
);

impl ReqRow {
    fn into_req(self, shared: &HashMap<i64, Shared>) -> Req {
        let own = |s: Option<String>| s.map(Arc::<str>::from);
        let (message, message_html, message_chat, calendar) =
            match self.body_id.and_then(|b| shared.get(&b)) {
                Some((text, html, chat, cal)) => {
                    (text.clone(), html.clone(), chat.clone(), cal.clone())
                }
                None => (
                    self.message.into(),
                    own(self.message_html),
                    own(self.message_chat),
                    own(self.calendar),
                ),
            };
        Req {
            id: self.id,
            subject: self.subject,
            message,
            message_html,
            message_chat,
            message_sms: self.message_sms,
            request_date: self.request_date,
            unsubscribe_url: self.unsubscribe_url,
            shared: self.body_id.is_some(),
            manage_url: self.manage_url,
            full_url: self.full_url,
            message_webhook: self.message_webhook,
            subscription_id: self.subscription_id,
            calendar,
        }
    }
}

/// The shared renderings `loaded` names, each read once, with the HTML
/// (`email`) or the chat text (not).
fn shared_bodies(
    conn: &mut DbConn,
    loaded: &[ReqRow],
    email: bool,
) -> Result<HashMap<i64, Shared>> {
    let mut ids: Vec<i64> = loaded.iter().filter_map(|r| r.body_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut shared = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(10_000) {
        type Found = (i64, String, Option<String>, Option<String>, Option<String>);
        let found: Vec<Found> = nt_bodies::table
            .filter(nt_bodies::body_id.eq_any(chunk))
            .select((
                nt_bodies::body_id,
                nt_bodies::message,
                body("nt_bodies.message_html", email),
                body("nt_bodies.message_chat", !email),
                body("nt_bodies.calendar", email),
            ))
            .load(conn)?;
        for (id, text, html, chat, cal) in found {
            let arc = |s: Option<String>| s.map(Arc::<str>::from);
            shared.insert(id, (text.into(), arc(html), arc(chat), arc(cal)));
        }
    }
    Ok(shared)
}

/// The list of each subscription whose digest the round sends by email
/// (its thread's `List-Id`): the collection's uuid and name, or none and
/// "All collections" for a subscription to every collection. One query a
/// round, only when the round holds email digests; a round of
/// notifications reads nothing here. A subscription deleted since its
/// digest was posted has no list (its digest still threads).
fn load_lists(
    conn: &mut DbConn,
    reqs: &HashMap<i64, Req>,
) -> Result<HashMap<i64, (Option<String>, String)>> {
    let mut subs: Vec<i64> = reqs
        .values()
        .filter(|q| q.message_html.is_some())
        .filter_map(|q| q.subscription_id)
        .collect();
    subs.sort_unstable();
    subs.dedup();
    let mut lists = HashMap::with_capacity(subs.len());
    for chunk in subs.chunks(10_000) {
        let found: Vec<(i64, Option<String>, Option<String>)> = subscriptions::table
            .left_join(
                collections::table.on(subscriptions::collection_id.eq(collections::id.nullable())),
            )
            .filter(subscriptions::id.eq_any(chunk))
            .select((
                subscriptions::id,
                collections::uuid.nullable(),
                collections::name.nullable(),
            ))
            .load(conn)?;
        for (sub, uuid, name) in found {
            let name = name.unwrap_or_else(|| "All collections".into());
            lists.insert(sub, (uuid, name));
        }
    }
    Ok(lists)
}

/// The zone and 12/24-hour style ([`Style`], as digests show times) of
/// each recipient whose email in `rows` holds several requests: its
/// message heads each section with the time it was sent, in the
/// recipient's own terms. Only users have them (a group's rows, when
/// expanded, are its members'); a group sent to as one, or an address
/// with no user behind it (a sign-up's verification, the daily report),
/// reads UTC, 24-hour, as a group's digests do. One query, only when
/// some message holds several requests: most rounds make one message
/// per request and read nothing here.
fn load_styles(conn: &mut DbConn, rows: &[Row]) -> Result<HashMap<i64, Style>> {
    let mut batched: Vec<i64> = rows
        .windows(2)
        .filter(|w| {
            w[0].channel == Channel::Email.as_str()
                && (w[0].party_from, w[0].party_to, &w[0].channel)
                    == (w[1].party_from, w[1].party_to, &w[1].channel)
        })
        .map(|w| w[0].party_to)
        .collect();
    batched.sort_unstable();
    batched.dedup();
    let mut styles = HashMap::new();
    for chunk in batched.chunks(10_000) {
        let found: Vec<(i64, String, String)> = users::table
            .filter(users::party_id.eq_any(chunk))
            .select((users::party_id, users::timezone, users::locale))
            .load(conn)?;
        for (party, tz, locale) in found {
            // Zones are checked when a user is written; one the zone data
            // no longer knows reads UTC rather than stopping the round.
            let tz = tz.parse().unwrap_or(chrono_tz::UTC);
            styles.insert(party, Style::new(tz, &locale));
        }
    }
    Ok(styles)
}

//! One batch on an open session: each chat stanza written, at most
//! `[xmpp] ack_window` of them unacknowledged at a time, each told of
//! (`accepted`, the queue's journal) as the server's XEP-0198 `<a h=…/>`
//! counts it; then the pings that vouch for the batch and bring its
//! bounces back.
//!
//! tokio-xmpp asks for an acknowledgement (`<r/>`) after every write burst,
//! and `send_stanza` returns once its stanza is written, so each stanza is
//! followed by a request and the server answers each. Before the window's
//! next stanza goes, the oldest one in flight must turn `Acked`: so at any
//! moment at most `ack_window` stanzas have gone out without being in the
//! journal, and that is what a `kill -9` can send twice. An acknowledgement
//! says the server took the stanza (for a local account: routed it to the
//! person's sessions or stored it), the same promise as an SMTP `250`; a
//! bounce that comes later still turns the message's result into an error.
//!
//! On a server without stream management (or with `ack_window = 0`) no
//! stanza is ever acknowledged: the batch goes out in one burst and the
//! pings alone vouch for it, each message told of after them.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use tokio_xmpp::jid::Jid;
use tokio_xmpp::minidom::Element;
use tokio_xmpp::parsers::message::MessageType;
use tokio_xmpp::parsers::ping::Ping;
use tokio_xmpp::stanzastream::{StanzaStage, StanzaState, StanzaToken};
use tokio_xmpp::{Client, Event, IqRequest, Stanza};

use super::stanza::{self, classify, stanza_id};
use super::Error;
use crate::listener::{Accepted, Delivered, DeliveryError, Outgoing};

type Slot = Option<std::result::Result<Delivered, DeliveryError>>;

/// Reads what the server sent while nothing was listening: bounces are
/// noted, a dropped stream is reported.
fn note_event(
    ev: Option<Event>,
    ids: &HashMap<String, usize>,
    out: &mut [Slot],
) -> std::result::Result<(), String> {
    match ev {
        Some(Event::Stanza(Stanza::Message(m))) if m.type_ == MessageType::Error => {
            let Some(i) = m.id.as_ref().and_then(|id| ids.get(&id.0)) else {
                return Ok(());
            };
            let error = m.payloads.iter().find(|p| p.name() == "error");
            let bounced = error.map_or(Error::NoCondition, classify);
            out[*i] = Some(Err(bounced.into()));
            Ok(())
        }
        Some(Event::Disconnected(e)) => Err(format!("connection lost: {e}")),
        None => Err("stream closed".into()),
        Some(_) => Ok(()),
    }
}

/// What [`send_batch`] knows: each message's result where known, why the
/// stream broke if it did, and whether any message had been handed to the
/// stream before it broke (if not, a fresh session can safely try again).
pub(super) type Batch = (Vec<Slot>, Option<String>, bool);

/// How a batch is sent: its number (for stanza ids), the body cap, the
/// wait for any one answer, and the acknowledgement window (0: none).
pub(super) struct Params {
    pub batch: u64,
    pub max_chars: usize,
    pub timeout: Duration,
    pub window: usize,
}

/// A message's result once the server has taken it.
fn delivered(id: &str, acked: bool) -> Delivered {
    Delivered {
        code: None,
        text: if acked {
            "acknowledged by the server".into()
        } else {
            "accepted by the server".into()
        },
        remote_id: Some(id.to_string()),
    }
}

/// The batch in progress: results, the way back from a bounce's id, and
/// which messages were told of.
struct State<'a> {
    out: Vec<Slot>,
    ids: HashMap<String, usize>,
    sent_ids: Vec<String>,
    noted: Vec<bool>,
    accepted: Accepted<'a>,
}

impl State<'_> {
    /// Tells of message `i` as taken, unless it bounced or was told of.
    fn note(&mut self, i: usize, acked: bool) {
        if self.noted[i] || self.out[i].is_some() {
            return;
        }
        self.noted[i] = true;
        (self.accepted)(i, &delivered(&self.sent_ids[i], acked));
    }
}

/// Waits until `token`'s stanza is acknowledged, reading bounces
/// meanwhile; `Err` when the stream broke or no answer came in `timeout`.
async fn await_ack(
    client: &mut Client,
    token: &mut StanzaToken,
    st: &mut State<'_>,
    timeout: Duration,
) -> std::result::Result<(), String> {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            s = token.wait_for(StanzaStage::Acked) => return match s {
                Some(StanzaState::Acked { .. }) => Ok(()),
                Some(StanzaState::Failed { error }) => Err(format!("send failed: {error}")),
                _ => Err("the stream dropped a stanza before its acknowledgement".into()),
            },
            ev = client.next() => note_event(ev, &st.ids, &mut st.out)?,
            _ = &mut deadline => {
                return Err(format!("no acknowledgement from the server in {}s", timeout.as_secs()))
            }
        }
    }
}

/// Sends `msgs` on `client`, at most `p.window` unacknowledged at a time
/// when the session has stream management, then waits for the pings that
/// vouch for them. `accepted` hears of each message as it is acknowledged
/// (or, without acknowledgements, after the pings).
pub(super) async fn send_batch(
    client: &mut Client,
    msgs: &[Outgoing],
    p: &Params,
    accepted: Accepted<'_>,
) -> Batch {
    let sent_ids: Vec<String> = (0..msgs.len())
        .map(|i| stanza_id(&msgs[i], p.batch, i))
        .collect();
    let ids = sent_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.clone(), i))
        .collect();
    let mut st = State {
        out: vec![None; msgs.len()],
        ids,
        sent_ids,
        noted: vec![false; msgs.len()],
        accepted,
    };
    let (lost, handed) = send_all(client, msgs, p, &mut st).await;
    for i in 0..msgs.len() {
        if st.out[i].is_none() && st.noted[i] {
            st.out[i] = Some(Ok(delivered(&st.sent_ids[i], true)));
        }
    }
    (st.out, lost, handed)
}

/// The body of [`send_batch`]: why the stream broke, if it did, and
/// whether any stanza had been handed to it.
async fn send_all(
    client: &mut Client,
    msgs: &[Outgoing],
    p: &Params,
    st: &mut State<'_>,
) -> (Option<String>, bool) {
    // What arrived since the last batch: a stream that died meanwhile is
    // found here rather than after a timeout. A late bounce of an earlier
    // batch belongs to no message of this one.
    while let Some(ev) = client.next().now_or_never() {
        if let Err(e) = note_event(ev, &HashMap::new(), &mut st.out) {
            return (Some(e), false);
        }
    }
    let sm = p.window > 0
        && client
            .get_stream_features()
            .is_some_and(|f| f.stream_management.is_some());
    // Where the batch's pings go: our own server (`None` before the
    // server has bound us: the server itself), then each other domain a
    // message went to (see below).
    let mut domains: Vec<Option<Jid>> =
        vec![client.bound_jid().map(|j| Jid::from(j.domain().to_owned()))];
    // Every stanza handed to the stream, and those not yet acknowledged.
    let mut tokens: Vec<Option<StanzaToken>> = Vec::new();
    let mut in_flight: VecDeque<usize> = VecDeque::new();
    for (i, m) in msgs.iter().enumerate() {
        // A message that can never be sent (bad address, a body XML cannot
        // carry) is answered here and never reaches the session, so it
        // cannot break the session for the rest of the batch.
        let (jid, stanza) = match stanza::prepare(m, &st.sent_ids[i], p.max_chars) {
            Ok(p) => p,
            Err(e) => {
                st.out[i] = Some(Err(e.into()));
                tokens.push(None);
                continue;
            }
        };
        let domain = Some(Jid::from(jid.domain().to_owned()));
        if !domains.contains(&domain) {
            domains.push(domain);
        }
        // The window is full: the oldest must be acknowledged (and
        // journaled) before another stanza goes.
        while sm && in_flight.len() >= p.window {
            let j = in_flight.pop_front().expect("the window is not empty");
            let t = tokens[j].as_mut().expect("in flight");
            if let Err(e) = await_ack(client, t, st, p.timeout).await {
                return (Some(e), true);
            }
            st.note(j, true);
        }
        let failed = match tokio::time::timeout(p.timeout, client.send_stanza(stanza)).await {
            Ok(Ok(t)) => {
                tokens.push(Some(t));
                in_flight.push_back(i);
                continue;
            }
            // The stream could not write what `prepare` could: this message
            // will never go. Its writer may have stopped inside the stanza,
            // so the session ends here as after any failed send.
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::InvalidInput => {
                st.out[i] = Some(Err(Error::Unwritable(e.to_string()).into()));
                format!("send failed: {e}")
            }
            Ok(Err(e)) => format!("send failed: {e}"),
            Err(_) => "send timed out".to_string(),
        };
        let handed = tokens.iter().any(Option::is_some);
        return (Some(failed), handed);
    }
    let handed = tokens.iter().any(Option::is_some);
    // The rest of the window, acknowledged one by one as well.
    while let Some(j) = in_flight.pop_front().filter(|_| sm) {
        let t = tokens[j].as_mut().expect("in flight");
        if let Err(e) = await_ack(client, t, st, p.timeout).await {
            return (Some(e), handed);
        }
        st.note(j, true);
    }
    let lost = ping(client, domains, st, p.timeout).await;
    for (i, t) in tokens.iter().enumerate() {
        let acked = t
            .as_ref()
            .is_some_and(|t| StanzaStage::from(&t.state()) == StanzaStage::Acked);
        if st.out[i].is_none() && t.is_some() && (lost.is_none() || acked) {
            st.note(i, acked);
            st.out[i] = Some(Ok(delivered(&st.sent_ids[i], acked)));
        }
    }
    (lost, handed)
}

/// One ping to our own server, which answers it itself, and one to each
/// other domain of the batch: a stanza for another domain is routed over
/// server-to-server after our server has answered its own ping, and only a
/// ping routed the same way comes back (or bounces) behind it. Stanzas
/// between two entities are handled in order, so when every answer (or
/// error) is in, every message before it has been taken or bounced. Why
/// the stream broke, if it did.
async fn ping(
    client: &mut Client,
    domains: Vec<Option<Jid>>,
    st: &mut State<'_>,
    timeout: Duration,
) -> Option<String> {
    let mut pings = Vec::with_capacity(domains.len());
    for to in domains {
        pings.push(
            client
                .send_iq(to, IqRequest::Get(Element::from(Ping)))
                .await,
        );
    }
    let mut all = futures_util::future::join_all(pings);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut lost = None;
    loop {
        tokio::select! {
            ev = client.next() => {
                if let Err(e) = note_event(ev, &st.ids, &mut st.out) {
                    lost = Some(e);
                    break;
                }
            }
            // An error answer to a ping still means it went the whole way.
            rs = &mut all => {
                if let Some(Err(e)) = rs.into_iter().find(Result::is_err) {
                    lost = Some(format!("ping failed: {e}"));
                }
                break;
            }
            _ = &mut deadline => {
                lost = Some(format!("no answer from the server in {}s", timeout.as_secs()));
                break;
            }
        }
    }
    if lost.is_none() {
        while let Some(ev) = client.next().now_or_never() {
            if let Err(e) = note_event(ev, &st.ids, &mut st.out) {
                return Some(e);
            }
        }
    }
    lost
}

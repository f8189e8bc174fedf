//! A batch's posts, several at once: one lane per endpoint (its URL), a
//! lane's posts one after another in the batch's order (a receiver that
//! relies on order sees its messages in order), at most `concurrency`
//! lanes running, so at most `concurrency` posts in flight; all inside one
//! `block_on` on the process's runtime, which the listener's thread
//! blocks on as before. Each post that is accepted is told of
//! ([`Accepted`]) the moment its answer is read, before its lane sends
//! the next: a crash re-sends at most the posts in flight.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use futures_util::stream::{self, StreamExt};
use tokio::runtime::Handle;

use super::{retry_after, Error};
use crate::http::{self, MAX_ANSWER};
use crate::listener::{Accepted, Delivered};

/// One message's post, ready to go.
pub(super) struct Post {
    /// The URL it goes to, as checked: posts to one go one at a time.
    pub endpoint: String,
    pub req: reqwest::RequestBuilder,
}

/// Each post of `posts` (by its index in the batch) with its result, at
/// most `concurrency` in flight, on `rt`; `now` reads a `Retry-After`
/// date. The results come back in no particular order, each with its
/// index.
pub(super) fn post_all(
    rt: &Handle,
    posts: Vec<(usize, Post)>,
    concurrency: usize,
    now: Option<DateTime<Utc>>,
    accepted: Accepted<'_>,
) -> Vec<(usize, Result<Delivered, Error>)> {
    if posts.is_empty() {
        return Vec::new();
    }
    let lanes = lanes(posts);
    let run = stream::iter(lanes)
        .map(|lane| async move {
            let mut done = Vec::with_capacity(lane.len());
            for (i, req) in lane {
                let r = post(req, now).await;
                if let Ok(d) = &r {
                    accepted(i, d);
                }
                done.push((i, r));
            }
            done
        })
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<_>>();
    rt.block_on(run).into_iter().flatten().collect()
}

/// `p` alone, on `rt`.
pub(super) fn post_one(
    rt: &Handle,
    p: Post,
    now: Option<DateTime<Utc>>,
) -> Result<Delivered, Error> {
    rt.block_on(post(p.req, now))
}

/// `posts` split per endpoint, each lane in the batch's order, the lanes
/// in the order of their first post.
fn lanes(posts: Vec<(usize, Post)>) -> Vec<Vec<(usize, reqwest::RequestBuilder)>> {
    let mut lanes: Vec<Vec<(usize, reqwest::RequestBuilder)>> = Vec::new();
    let mut lane_of: HashMap<String, usize> = HashMap::new();
    for (i, p) in posts {
        let next = lanes.len();
        let k = *lane_of.entry(p.endpoint).or_insert(next);
        if k == next {
            lanes.push(Vec::new());
        }
        lanes[k].push((i, p.req));
    }
    lanes
}

/// One post and its answer: 2xx delivered, anything else
/// [`Error::Refused`], nothing [`Error::Unanswered`].
async fn post(
    req: reqwest::RequestBuilder,
    now: Option<DateTime<Utc>>,
) -> Result<Delivered, Error> {
    let resp = http::read(req, MAX_ANSWER)
        .await
        .map_err(Error::unanswered)?;
    let status = resp.status;
    if (200..=299).contains(&status) {
        let cut = if resp.cut {
            " (answer cut at 64 KiB)"
        } else {
            ""
        };
        return Ok(Delivered {
            code: Some(status),
            text: format!("accepted{cut}"),
            remote_id: None,
        });
    }
    Err(Error::Refused {
        status,
        shown: crate::text::one_line(&resp.text)
            .chars()
            .take(300)
            .collect(),
        cut: resp.cut,
        location: resp.header("location"),
        retry_after: retry_after(&resp.headers, now),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post_to(url: &str) -> Post {
        Post {
            endpoint: url.into(),
            req: reqwest::Client::new().post(url),
        }
    }

    #[test]
    fn one_endpoints_posts_share_a_lane_in_the_batchs_order() {
        let posts = [
            "http://a/1",
            "http://b/",
            "http://a/1",
            "http://c/",
            "http://b/",
        ]
        .iter()
        .enumerate()
        .map(|(i, u)| (i, post_to(u)))
        .collect();
        let got: Vec<Vec<usize>> = lanes(posts)
            .into_iter()
            .map(|l| l.into_iter().map(|(i, _)| i).collect())
            .collect();
        assert_eq!(got, vec![vec![0, 2], vec![1, 4], vec![3]]);
    }

    #[test]
    fn no_answer_is_transient_and_its_text_has_no_url() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        // A port nothing listens on: refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/token-in-the-path");
        let told = std::sync::Mutex::new(Vec::new());
        let got = post_all(
            rt.handle(),
            vec![(0, post_to(&url)), (1, post_to(&url))],
            4,
            None,
            &|i, _| told.lock().unwrap().push(i),
        );
        assert_eq!(got.len(), 2);
        assert!(told.lock().unwrap().is_empty());
        for (_, r) in got {
            let e = crate::listener::DeliveryError::from(r.unwrap_err());
            let crate::listener::DeliveryError::Transient { code, text, .. } = e else {
                panic!("no answer is transient: {e:?}");
            };
            assert_eq!(code, None);
            assert!(
                text.starts_with("webhook: ") && !text.contains("token"),
                "{text}"
            );
        }
    }
}

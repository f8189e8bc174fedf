//! `token` and `ticket`: who may use the HTTP API and read feeds.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use crate::access::{self, Scope};
use crate::error::Result;
use crate::items;

#[derive(Subcommand, Debug)]
pub enum TokenCmd {
    /// Make an API token; prints its secret on the last line (shown only once).
    Add {
        name: String,
        /// admin (everything, addresses included), ingest (modifications and items),
        /// read (feeds, requests, queue, users without addresses), metrics (/metrics only).
        #[arg(long)]
        scope: String,
    },
    /// Tokens: name, scope, created, last used (never the secret).
    List {
        /// One JSON object per token (name, scope, created, last used).
        #[arg(long)]
        json: bool,
    },
    /// Delete a token: its secret stops working at once.
    Revoke { name: String },
}

#[derive(Subcommand, Debug)]
pub enum TicketCmd {
    /// Make a read ticket for one collection's feeds; prints `ID SECRET` (the secret is shown only once).
    Add { collection: String },
    /// A collection's tickets: id and created (never the secret).
    List { collection: String },
    /// Delete a ticket by id.
    Revoke { id: i64 },
}

pub fn token(cmd: TokenCmd, ctx: &mut Ctx) -> Result<()> {
    match cmd {
        TokenCmd::Add { name, scope } => {
            let scope = Scope::parse(&scope)?;
            let now = ctx.now();
            let (t, secret) = access::add_token(&mut *ctx.conn()?, now, &name, scope)?;
            writeln!(
                ctx.out,
                "token {} ({}) made; its secret, shown only this once:",
                t.name,
                t.scope.as_str()
            )?;
            writeln!(ctx.out, "{secret}")?;
        }
        TokenCmd::List { json } => {
            let tokens = access::list_tokens(&mut *ctx.conn()?)?;
            if json {
                for t in &tokens {
                    writeln!(
                        ctx.out,
                        "{}",
                        serde_json::to_string(t).expect("token serialises")
                    )?;
                }
            } else {
                for t in &tokens {
                    let used = t
                        .last_used_at
                        .map(|u| u.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                        .unwrap_or_else(|| "never".into());
                    writeln!(
                        ctx.out,
                        "{}\t{}\tcreated {}\tlast used {used}",
                        t.name,
                        t.scope.as_str(),
                        t.created_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    )?;
                }
            }
        }
        TokenCmd::Revoke { name } => {
            access::revoke_token(&mut *ctx.conn()?, &name)?;
            writeln!(ctx.out, "token {name} revoked")?;
        }
    }
    Ok(())
}

pub fn ticket(cmd: TicketCmd, ctx: &mut Ctx) -> Result<()> {
    let now = ctx.now();
    let mut conn = ctx.conn()?;
    match cmd {
        TicketCmd::Add { collection } => {
            let c = items::find_collection(&mut conn, &collection)?;
            let (id, secret) = access::add_ticket(&mut conn, now, c.id)?;
            writeln!(ctx.out, "{id} {secret}")?;
        }
        TicketCmd::List { collection } => {
            let c = items::find_collection(&mut conn, &collection)?;
            for (id, created) in access::list_tickets(&mut conn, c.id)? {
                writeln!(
                    ctx.out,
                    "{id}\tcreated {}",
                    created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )?;
            }
        }
        TicketCmd::Revoke { id } => {
            access::revoke_ticket(&mut conn, id)?;
            writeln!(ctx.out, "ticket {id} revoked")?;
        }
    }
    Ok(())
}

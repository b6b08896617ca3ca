//! One function per request a session can send after `hello` (as
//! mini-redis's `cmd/`): each reads what it needs from the [`Session`] and
//! the daemon's shared state and returns its reply; [`Session::dispatch`]
//! routes a request to its function and writes the reply.

use futures_util::{FutureExt, SinkExt};

use super::session::{Session, Waiting, WaitingHook};
use super::{send, Conn};
use crate::protocol::codec::HookResultFrame;
use crate::protocol::{
    AbortRequest, Decide, ErrorCode, GrantChange, GrantRevoke, HookRequest, HookResult, Reply,
    ReqOnly, Request, RunRequest, SessionFactsRequest, SteerRequest, Subscribe,
};
use crate::{grants, hook};

impl Session<'_> {
    /// Carries out `request` (its frame was `frame_bytes` long) and writes
    /// its reply, now or, for a hook that waits, when it has its answer.
    pub(super) async fn dispatch(
        &mut self,
        request: Request,
        frame_bytes: usize,
        waiting: &mut Waiting,
        conn: &mut Conn,
    ) {
        let reply = match request {
            Request::Hook(req) => {
                if let Some(result) = self.hook(req, frame_bytes, waiting) {
                    // Written with the next flush (see `session::next_frame`):
                    // a peer that pipelines hooks gets its answers in as few
                    // writes as it sent them in.
                    if let Err(e) = conn.feed(HookResultFrame(result)).await {
                        tracing::debug!(error = %e, "could not write to peer (gone?)");
                    }
                    self.unflushed = true;
                }
                return;
            }
            // Rare requests with large states, boxed: this future is part
            // of every session's (each client connection's) memory.
            Request::Run(req) => return Box::pin(self.run(req, conn)).await,
            Request::Hello(_) => Reply::error(
                ErrorCode::UnexpectedFrame,
                "`hello` was already sent on this connection",
                None,
            ),
            Request::Subscribe(sub) => self.subscribe(sub),
            Request::Unsubscribe(req) => self.unsubscribe(&req),
            Request::Pending(req) => self.pending(&req),
            Request::Status(req) => self.status(&req),
            Request::Grants(req) => self.grants(&req),
            Request::GrantRevoke(req) => self.grant_revoke(&req),
            Request::Steer(req) => self.steer(&req),
            Request::Abort(req) => self.abort(&req),
            Request::SessionFacts(req) => self.session_facts(&req),
            Request::Decide(req) => Box::pin(self.decide(req)).await,
        };
        send(conn, &reply).await;
    }

    /// `hook`: answered here when its answer is ready at once (the rules
    /// decide it, nothing to wait for: nearly every hook), and returned for
    /// the session to write; else it joins the session's waiting hooks,
    /// whose replies the session writes as they come (the answer may wait
    /// for a decision this very client sends: the session's loop goes on
    /// meanwhile).
    ///
    /// Polled once here, in a box: a hook answered at once costs no
    /// wake-up and no hop through a queue; one that is not goes on from
    /// where it stopped.
    fn hook(
        &self,
        req: HookRequest,
        frame_bytes: usize,
        waiting: &mut Waiting,
    ) -> Option<HookResult> {
        let (shared, shutdown) = (self.shared.clone(), self.shutdown.clone());
        // Boxed until answering starts: the future would otherwise keep a
        // slot the request's size while the hook waits.
        let req = Box::new(req);
        let mut answering: WaitingHook = Box::pin(async move {
            // Out of the box in a scope of its own, which frees the box now:
            // a box moved out of is freed only when its variable ends.
            let req = {
                let boxed = req;
                *boxed
            };
            hook::answer(req, frame_bytes, &shared, &shutdown).await
        });
        // A future that is not ready registers the waker it was polled
        // with, and a later poll's replaces it: the waiter's polls take
        // over (a hook handed to it is polled at once).
        if let Some(result) = (&mut answering).now_or_never() {
            return Some(result);
        }
        waiting.push(answering);
        None
    }

    /// `run`: starts an Agent SDK run owned by this connection. Its reply
    /// (the run id) is written before the run may push its first frame.
    async fn run(&mut self, r: RunRequest, conn: &mut Conn) {
        let req = r.req.clone();
        let client = self.hello.name.clone();
        match self
            .shared
            .runs
            .start(self.shared, r, self.queue.clone(), &client, self.shutdown)
        {
            Ok(started) => {
                self.runs.push(started.run_id.clone());
                let mut result = serde_json::json!({ "run_id": started.run_id });
                if let Some(upstream) = &started.model_upstream {
                    result["model_upstream"] = upstream.as_str().into();
                }
                send(conn, &Reply::ok(&req, Some(result))).await;
                started.go();
            }
            Err(e) => send(conn, &Reply::request_error(&req, e.code, e.message)).await,
        }
    }

    fn subscribe(&self, sub: Subscribe) -> Reply {
        self.shared
            .hub
            .subscribe(sub.filter, sub.redact, self.queue.clone());
        Reply::ok(&sub.req, None)
    }

    fn unsubscribe(&self, r: &ReqOnly) -> Reply {
        self.shared.hub.unsubscribe(self.client_id);
        Reply::ok(&r.req, None)
    }

    fn pending(&self, r: &ReqOnly) -> Reply {
        let items = serde_json::to_value(self.shared.hub.pending_list()).expect("items serialize");
        Reply::ok(&r.req, Some(items))
    }

    fn status(&self, r: &ReqOnly) -> Reply {
        let status = serde_json::to_value(self.shared.status()).expect("status serializes");
        Reply::ok(&r.req, Some(status))
    }

    /// `session_facts`: what tainted the session and its calls, its
    /// details redacted as the log's are (`hookd statusline` shows it).
    fn session_facts(&self, r: &SessionFactsRequest) -> Reply {
        let mut facts = self.shared.controller.session_facts(&r.session_id);
        let redactor = self.shared.redactor();
        for t in &mut facts.taint {
            if let Some(d) = &mut t.detail {
                *d = redactor.redact_str(d).into_owned();
            }
        }
        let reply = crate::protocol::SessionFactsReply {
            note: facts.note(),
            facts,
        };
        let result = serde_json::to_value(reply).expect("session facts serialize");
        Reply::ok(&r.req, Some(result))
    }

    fn grants(&self, r: &ReqOnly) -> Reply {
        let grants = serde_json::to_value(self.shared.grants.list(self.shared.clock.now()))
            .expect("grants serialize");
        Reply::ok(&r.req, Some(grants))
    }

    fn grant_revoke(&self, g: &GrantRevoke) -> Reply {
        match self.shared.grants.revoke(&g.id) {
            Some(grant) => {
                grants::announce(self.shared, GrantChange::Revoked, vec![grant]);
                Reply::ok(&g.req, None)
            }
            None => Reply::request_error(
                &g.req,
                ErrorCode::NotFound,
                format!("no active grant {}", g.id),
            ),
        }
    }

    fn steer(&self, s: &SteerRequest) -> Reply {
        match self.shared.runs.steer(&s.run_id, &s.text) {
            Ok(()) => Reply::ok(&s.req, None),
            Err(e) => Reply::request_error(&s.req, e.code, e.message),
        }
    }

    fn abort(&self, a: &AbortRequest) -> Reply {
        let by = format!("client:{}", self.hello.name);
        let done = if a.compaction {
            self.shared.runs.abort_compaction(&a.run_id, &by)
        } else {
            self.shared.runs.abort(&a.run_id, &by)
        };
        match done {
            Ok(()) => Reply::ok(&a.req, None),
            Err(e) => Reply::request_error(&a.req, e.code, e.message),
        }
    }

    async fn decide(&self, d: Decide) -> Reply {
        grants::decide(self.shared, d, &self.hello.name).await
    }
}

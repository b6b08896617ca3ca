//! One function per request a session can send after `hello` (as
//! mini-redis's `cmd/`): each reads what it needs from the [`Session`] and
//! the daemon's shared state and returns its reply; [`Session::dispatch`]
//! routes a request to its function and writes the reply.

use super::session::Session;
use super::{send, Conn};
use crate::protocol::{
    AbortRequest, Decide, ErrorCode, GrantChange, GrantRevoke, HookRequest, Reply, ReqOnly,
    Request, RunRequest, SessionFactsRequest, SteerRequest, Subscribe,
};
use crate::{grants, hook};

impl Session<'_> {
    /// Carries out `request` (its frame was `frame_bytes` long) and writes
    /// its reply, now or, for a hook, when its task has the answer.
    pub(super) async fn dispatch(&mut self, request: Request, frame_bytes: usize, conn: &mut Conn) {
        let reply = match request {
            Request::Hook(req) => return self.hook(req, frame_bytes),
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

    /// `hook`: answered by its own task, whose reply the session writes when
    /// it comes (the answer may wait for a decision this very client sends).
    fn hook(&mut self, req: HookRequest, frame_bytes: usize) {
        let (shared, shutdown) = (self.shared.clone(), self.shutdown.clone());
        let replies = self.replies.clone();
        self.in_flight += 1;
        // Boxed until answering starts: the task's future would otherwise
        // keep a slot the request's size while the hook waits.
        let req = Box::new(req);
        tokio::spawn(async move {
            // Out of the box in a scope of its own, which frees the box now:
            // a box moved out of is freed only when its variable ends.
            let req = {
                let boxed = req;
                *boxed
            };
            let result = hook::answer(req, frame_bytes, &shared, &shutdown).await;
            let _ = replies.send(result).await;
        });
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

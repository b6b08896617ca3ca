//! `model_relay`: a run whose model API is served by its client
//! (`hookd run --record` forwards and records each exchange, `--replay`
//! answers from a recording). The run's endpoint is pointed at the relay;
//! where it pointed before is the relay's upstream, told to the client.

use std::ffi::OsString;

use serde_json::{Map, Value};

use super::Refused;
use crate::protocol::adapter::Runtime;

/// The Messages API's own endpoint, when nothing else names one.
const ANTHROPIC_API: &str = "https://api.anthropic.com";

/// Points the run at `relay` (which must be a loopback `http://` URL: the
/// relay is the client's, on this machine); returns the endpoint it
/// pointed at before.
pub(super) fn point_at(
    relay: &str,
    runtime: Runtime,
    env: &mut Vec<(OsString, OsString)>,
    options: &mut Map<String, Value>,
) -> Result<String, Refused> {
    let host = relay
        .strip_prefix("http://")
        .map(|rest| rest.split(['/', ':']).next().unwrap_or_default());
    if !matches!(host, Some("127.0.0.1" | "localhost")) {
        return Err(Refused::invalid(format!(
            "model_relay: `{relay}` is not an http:// URL on 127.0.0.1 or localhost"
        )));
    }
    let relay = relay.trim_end_matches('/');
    match runtime {
        Runtime::ClaudeSdk => {
            const VAR: &str = "ANTHROPIC_BASE_URL";
            let before = env
                .iter()
                .rev()
                .find(|(k, v)| k == VAR && !v.is_empty())
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .unwrap_or_else(|| ANTHROPIC_API.to_string());
            env.retain(|(k, _)| k != VAR);
            env.push((VAR.into(), relay.into()));
            Ok(before.trim_end_matches('/').to_string())
        }
        Runtime::Pi => {
            let Some(provider) = options.get_mut("provider").and_then(Value::as_object_mut) else {
                return Err(Refused::invalid("model_relay: the pi run has no provider"));
            };
            let before = provider
                .get("baseUrl")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_string();
            if before.is_empty() {
                return Err(Refused::invalid(
                    "model_relay: the provider has no base_url to relay to",
                ));
            }
            // The client appends its paths to the relay's URL; the relay
            // appends them to the upstream's (`/v1` and all).
            provider.insert("baseUrl".into(), relay.into());
            Ok(before)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_run_points_at_the_relay_and_the_upstream_is_told() {
        let mut env = vec![
            ("ANTHROPIC_BASE_URL".into(), "http://mock:9/".into()),
            ("PATH".into(), "/bin".into()),
        ];
        let mut options = Map::new();
        let before = point_at(
            "http://127.0.0.1:5/",
            Runtime::ClaudeSdk,
            &mut env,
            &mut options,
        )
        .unwrap();
        assert_eq!(before, "http://mock:9");
        let vars: Vec<_> = env
            .iter()
            .filter(|(k, _)| k == "ANTHROPIC_BASE_URL")
            .collect();
        assert_eq!(vars.len(), 1);
        assert_eq!(vars[0].1, "http://127.0.0.1:5");
        // No endpoint set: Anthropic's own.
        let mut env = Vec::new();
        let before = point_at(
            "http://localhost:5",
            Runtime::ClaudeSdk,
            &mut env,
            &mut options,
        );
        assert_eq!(before.unwrap(), ANTHROPIC_API);

        let mut options = Map::new();
        options.insert("provider".into(), json!({"baseUrl": "http://h:1/v1"}));
        let before = point_at("http://127.0.0.1:5", Runtime::Pi, &mut env, &mut options).unwrap();
        assert_eq!(before, "http://h:1/v1");
        assert_eq!(options["provider"]["baseUrl"], "http://127.0.0.1:5");
    }

    #[test]
    fn a_relay_elsewhere_is_refused() {
        for relay in [
            "https://127.0.0.1:5",
            "http://10.0.0.1:5",
            "http://127.0.0.1.evil:5",
            "x",
        ] {
            let err =
                point_at(relay, Runtime::ClaudeSdk, &mut Vec::new(), &mut Map::new()).unwrap_err();
            assert!(
                err.message.contains("not an http:// URL on 127.0.0.1"),
                "{relay}: {}",
                err.message
            );
        }
    }
}

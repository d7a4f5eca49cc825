//! A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for Claude Code to talk to.
//!
//! `POST /v1/messages` is answered as the API answers it: a stream of server-sent events
//! (`message_start`, one `content_block_*` run per block, `message_delta` with the stop reason
//! and usage, `message_stop`), or one JSON message when the request does not stream. The main
//! conversation (a request that offers tools) is answered from the scenario's script, one turn
//! per request, and so are subagents' requests, from their own script; Claude Code's side requests (titles, summaries without tools) get a short text.
//! Every request is logged, so a scenario can check what the model was shown.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use serde_json::{Value, json};

/// One scripted model turn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Turn {
    /// A text answer that ends the turn.
    Text(String),
    /// A tool call (`name`, `input`), then the model waits for its result.
    Tool(String, Value),
    /// The API refuses the request with an error of this type (and its HTTP status).
    Error(String),
}

/// What the stub was asked, for the scenario's checks.
#[derive(Debug, Default)]
pub(crate) struct Log {
    /// Each request: its path and its body.
    pub(crate) requests: Vec<(String, Value)>,
    /// Scripted turns asked for after the script ran out.
    pub(crate) overruns: usize,
}

/// A running stub.
pub(crate) struct Stub {
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    log: Arc<Mutex<Log>>,
}

impl Stub {
    /// Starts answering on a free port: the main conversation from `script`, subagents' requests
    /// from `subagents` (in the order they come).
    pub(crate) fn start(
        script: Vec<Turn>,
        subagents: Vec<Turn>,
        model: &str,
        tokens: u64,
    ) -> anyhow::Result<Stub> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the API stub")?;
        let url = format!("http://{}", listener.local_addr()?);
        let log = Arc::new(Mutex::new(Log::default()));
        let script = Arc::new(Mutex::new([VecDeque::from(script), VecDeque::from(subagents)]));
        let (shared, model) = (Arc::clone(&log), model.to_owned());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, script, model) =
                    (Arc::clone(&shared), Arc::clone(&script), model.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &log, &script, &model, tokens);
                });
            }
        });
        Ok(Stub { url, log })
    }

    /// What it was asked so far.
    pub(crate) fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        lock(&self.log)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Answers the requests of one connection (kept alive while the client wants).
fn serve(
    stream: TcpStream,
    log: &Mutex<Log>,
    script: &Mutex<[VecDeque<Turn>; 2]>,
    model: &str,
    tokens: u64,
) -> anyhow::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        lock(log).requests.push((path.clone(), request.clone()));

        if !path.starts_with("/v1/messages") || path.starts_with("/v1/messages/count_tokens") {
            let body = if path.starts_with("/v1/messages/count_tokens") {
                json!({"input_tokens": 1000}).to_string()
            } else {
                json!({"type": "error", "error": {"type": "not_found_error", "message": "stub"}})
                    .to_string()
            };
            let status = if path.starts_with("/v1/messages") { "200 OK" } else { "404 Not Found" };
            write!(
                writer,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )?;
            continue;
        }
        let turn = next_turn(&request, log, script);
        if let Turn::Error(kind) = &turn {
            let body = json!({"type": "error", "error": {"type": kind, "message": "scripted"}})
                .to_string();
            write!(
                writer,
                "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                error_status(kind),
                body.len()
            )?;
            writer.flush()?;
            continue;
        }
        let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
        let n = lock(log).requests.len();
        let message = message(&turn, model, n, tokens);
        if stream {
            let mut events = String::new();
            for (name, data) in events_of(&message) {
                let _ = write!(events, "event: {name}\ndata: {data}\n\n");
            }
            write!(
                writer,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {}\r\n\r\n{events}",
                events.len()
            )?;
        } else {
            let body = message.to_string();
            write!(
                writer,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )?;
        }
        writer.flush()?;
    }
}

/// The answer to `request`: the main conversation (it offers tools) and subagents take their
/// script's next turn; a compaction gets a summary; side requests (a title) a short text.
fn next_turn(request: &Value, log: &Mutex<Log>, script: &Mutex<[VecDeque<Turn>; 2]>) -> Turn {
    let main = request.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    if is_compaction(request) {
        Turn::Text(
            "<analysis>The user stated a decision.</analysis>\n<summary>1. Primary Request: \
             the user stated a decision about session tokens.</summary>"
                .to_owned(),
        )
    } else if main {
        let mut scripts = lock(script);
        let script = &mut scripts[usize::from(is_subagent(request))];
        let next = script.pop_front();
        // An API error stays: Claude Code's retries get it too.
        if let Some(error @ Turn::Error(_)) = &next {
            script.push_front(error.clone());
        }
        next.unwrap_or_else(|| {
            lock(log).overruns += 1;
            Turn::Text("(the script has no more turns)".to_owned())
        })
    } else {
        Turn::Text("A short answer.".to_owned())
    }
}

/// The HTTP status the API answers an error of type `kind` with.
fn error_status(kind: &str) -> &'static str {
    match kind {
        "authentication_error" => "401 Unauthorized",
        "permission_error" => "403 Forbidden",
        "rate_limit_error" => "429 Too Many Requests",
        "overloaded_error" => "529 Overloaded",
        "api_error" => "500 Internal Server Error",
        _ => "400 Bad Request",
    }
}

/// Whether `request` comes from a subagent (the Agent tool): Claude Code 2.1.330 says so in the
/// billing line that opens the system prompt.
pub(crate) fn is_subagent(request: &Value) -> bool {
    request.get("system").is_some_and(|system| system.to_string().contains("cc_is_subagent=true"))
}

/// Whether `request` asks for the conversation's summary (`/compact`, auto-compaction).
pub(crate) fn is_compaction(request: &Value) -> bool {
    let Some(last) = request.get("messages").and_then(Value::as_array).and_then(|m| m.last())
    else {
        return false;
    };
    last.to_string().contains("Respond with TEXT ONLY")
}

/// In a scripted tool input, the character that stands for a lone surrogate: the model's
/// JSON gets the escape `\ud800` in its place, which JavaScript reads and Rust's strings
/// cannot hold (a scenario writes it `\uE000`).
const LONE_SURROGATE: char = '\u{E000}';

/// The whole message for `turn`, as if `tokens` were in the context.
fn message(turn: &Turn, model: &str, n: usize, tokens: u64) -> Value {
    let (content, stop) = match turn {
        Turn::Text(text) | Turn::Error(text) => {
            (json!([{"type": "text", "text": text}]), "end_turn")
        }
        Turn::Tool(name, input) => (
            json!([{"type": "tool_use", "id": format!("toolu_stub{n:04}"), "name": name, "input": input}]),
            "tool_use",
        ),
    };
    json!({
        "id": format!("msg_stub{n:04}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": tokens, "output_tokens": 20,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    })
}

/// The server-sent events that stream `message`.
fn events_of(message: &Value) -> Vec<(&'static str, String)> {
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut events = vec![("message_start", json!({"type": "message_start", "message": start}))];
    for (index, block) in message["content"].as_array().into_iter().flatten().enumerate() {
        let (opening, delta) = match block["type"].as_str() {
            Some("tool_use") => {
                let mut opening = block.clone();
                opening["input"] = json!({});
                let partial = block["input"].to_string().replace(LONE_SURROGATE, r"\ud800");
                (opening, json!({"type": "input_json_delta", "partial_json": partial}))
            }
            _ => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": opening}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
               "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events.into_iter().map(|(name, data)| (name, data.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_turn_streams_its_input_as_json_deltas() {
        let message = message(&Turn::Tool("Bash".into(), json!({"command": "ls"})), "m", 1, 10);
        let events = events_of(&message);
        let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let delta: Value = serde_json::from_str(&events[2].1).unwrap_or_default();
        assert_eq!(delta["delta"]["partial_json"], r#"{"command":"ls"}"#);
        let odd =
            super::message(&Turn::Tool("Write".into(), json!({"content": "a\u{E000}"})), "m", 1, 1);
        let delta: Value = serde_json::from_str(&events_of(&odd)[2].1).unwrap();
        assert_eq!(delta["delta"]["partial_json"], r#"{"content":"a\ud800"}"#);
        let end: Value = serde_json::from_str(&events[4].1).unwrap_or_default();
        assert_eq!(end["delta"]["stop_reason"], "tool_use");
    }
}

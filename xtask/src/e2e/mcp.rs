//! A scripted MCP server on stdio, for scenarios that need one (`mcp_stub = true`): one tool,
//! `ask_user`, whose call asks Claude Code for input (`elicitation/create`), which runs the
//! `Elicitation` and `ElicitationResult` hooks. Run by Claude Code as
//! `xtask e2e-mcp-stub` (the scenario's `--mcp-config` names the running xtask).

use std::io::{BufRead as _, Write as _};

use serde_json::{Value, json};

/// The server's name in Claude Code (`mcp__stub__ask_user`).
pub(crate) const NAME: &str = "stub";

/// Serves stdin until it closes.
pub(crate) fn serve() -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    let mut send = |message: Value| -> std::io::Result<()> {
        writeln!(out, "{message}")?;
        out.flush()
    };
    while let Some(line) = lines.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line?) else { continue };
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let result = match method {
            "initialize" => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": NAME, "version": "1.0.0"},
            }),
            "tools/list" => json!({"tools": [{
                "name": "ask_user",
                "description": "Asks the user which environment to deploy to.",
                "inputSchema": {"type": "object", "properties": {}},
            }]}),
            "tools/call" => {
                send(json!({
                    "jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create",
                    "params": {
                        "message": "Which environment?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"environment": {"type": "string"}},
                            "required": ["environment"],
                        },
                    },
                }))?;
                // Claude Code's answer to the elicitation (other messages meanwhile are
                // notifications).
                let mut answer = Value::Null;
                for line in lines.by_ref() {
                    let reply: Value = serde_json::from_str(&line?).unwrap_or_default();
                    if reply["id"] == "elicit-1" {
                        answer = reply;
                        break;
                    }
                }
                let text = format!("the user answered: {}", answer["result"]);
                json!({"content": [{"type": "text", "text": text}]})
            }
            "ping" => json!({}),
            _ => {
                send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                            "message": format!("no method {method}")}}))?;
                continue;
            }
        };
        send(json!({"jsonrpc": "2.0", "id": id, "result": result}))?;
    }
    Ok(())
}

//! A small MCP server (stdio) whose one tool asks the person a question in the middle of
//! its call (`elicitation/create`) and answers with what came back: the action, the values
//! and, for a decline nobody made, the client's reason.
//!
//! ```text
//! ipybox-fixture-elicit
//! ```
//!
//! Speaks MCP as specified at
//! <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>. It asks
//! whether or not the client offered elicitation, as a careless server would.

use rmcp::{
    ErrorData, ServerHandler, ServiceExt as _,
    handler::server::{tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams,
        ElicitationSchema, ServerRequest,
    },
    schemars::{self, JsonSchema},
    service::RequestContext,
    tool, tool_handler, tool_router,
    transport::stdio,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
struct AskParams {
    /// What to ask; a plain question when left out.
    #[serde(default)]
    message: Option<String>,
}

#[derive(Clone)]
struct Fixture {
    tool_router: ToolRouter<Self>,
}

/// The form it asks for: a string with a default, an email, a bounded integer, a boolean
/// with a default, a titled choice, and a secret.
fn schema() -> Result<ElicitationSchema, ErrorData> {
    serde_json::from_value(serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name", "default": "Ada Lovelace"},
            "email": {"type": "string", "title": "Email", "format": "email",
                      "description": "Where the report goes"},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "subscribe": {"type": "boolean", "title": "Subscribe to updates", "default": true},
            "color": {"type": "string", "title": "Favourite colour", "oneOf": [
                {"const": "red", "title": "Red"},
                {"const": "green", "title": "Green"},
                {"const": "blue", "title": "Blue"},
            ]},
            "api_token": {"type": "string", "title": "API token"},
        },
        "required": ["email", "age"],
    }))
    .map_err(|e| ErrorData::internal_error(format!("the fixture's schema: {e}"), None))
}

#[tool_router]
impl Fixture {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Ask the person a few questions, then return what came back.")]
    async fn ask(
        &self,
        Parameters(AskParams { message }): Parameters<AskParams>,
        context: RequestContext<rmcp::RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.unwrap_or_else(|| "Who is running this analysis?".into()),
            requested_schema: schema()?,
        };
        let asked = context
            .peer
            .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(request)))
            .await;
        let text = match asked {
            Ok(ClientResult::ElicitResult(result)) => serde_json::json!({
                "action": result.action,
                "content": result.content,
                "reason": result
                    .meta
                    .as_ref()
                    .and_then(|m| m.0.get("ipybox/reason"))
                    .cloned(),
            })
            .to_string(),
            Ok(other) => {
                serde_json::json!({"error": format!("unexpected answer {other:?}")}).to_string()
            }
            Err(e) => serde_json::json!({"error": e.to_string()}).to_string(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

#[tool_handler(router = self.tool_router, name = "ipybox-fixture-elicit", version = "0.1.0")]
impl ServerHandler for Fixture {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Fixture::new().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}

//! The window's TypeScript types, generated from the Rust types that cross to it:
//! `ui/src/generated/backend.ts`. The test below fails when that file is stale;
//! `IPYBOX_BLESS=1 cargo test -p ipybox --lib desktop::bindings` writes it again.
//!
//! JavaScript reads every JSON number as a double, so 64-bit integers (ids, sizes, times in
//! milliseconds, all far below 2^53) are `number` here, not `bigint`.

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};

use ts_rs::{Config, TS, TypeVisitor};

use super::dto;

/// Where the generated file lives, from the crate's directory.
const GENERATED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ui/src/generated/backend.ts"
);

/// The types the window reads or sends; what they use is declared with them.
fn roots(c: &mut Collect) {
    c.visit::<dto::DesktopError>();
    c.visit::<dto::KernelStatus>();
    c.visit::<dto::SessionNotice>();
    c.visit::<dto::AppState>();
    c.visit::<dto::StartState>();
    c.visit::<dto::AppSettings>();
    c.visit::<dto::SavedTool>();
    c.visit::<dto::McpEndpointState>();
    c.visit::<dto::ExecEvent>();
    c.visit::<dto::SandboxState>();
    c.visit::<dto::RemoteState>();
    c.visit::<dto::PolicyDocument>();
    c.visit::<dto::PolicyFileChanged>();
    c.visit::<dto::ServerList>();
    c.visit::<crate::catalog::Entry>();
    c.visit::<dto::Choice>();
    c.visit::<dto::RemoteRequest>();
    c.visit::<dto::ExportFormat>();
    c.visit::<dto::PythonOptions>();
    c.visit::<dto::PythonCheck>();
    // The engine's own types, as they cross to the window unchanged.
    c.visit::<crate::events::SessionEvent>();
    c.visit::<crate::mcp_server::AgentActivity>();
    c.visit::<crate::tools::grants::Grant>();
    c.visit::<crate::tools::Rule>();
    c.visit::<crate::audit::AuditEntry>();
    c.visit::<crate::sandbox::access::Verdict>();
    c.visit::<crate::executor::Registration>();
    c.visit::<crate::executor::Placeholder>();
    c.visit::<crate::executor::GatewayProbe>();
    c.visit::<crate::executor::Completions>();
    c.visit::<crate::executor::Inspection>();
    c.visit::<crate::executor::KernelVariables>();
    c.visit::<crate::executor::FrameQuery>();
    c.visit::<crate::executor::FramePage>();
}

/// Declarations by name: each type visited, and every type it uses (but the JSON value,
/// which the window declares itself).
struct Collect {
    cfg: Config,
    decls: BTreeMap<String, String>,
    /// Every type visited once: the JSON value is made of itself.
    seen: HashSet<TypeId>,
}

impl TypeVisitor for Collect {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if !self.seen.insert(TypeId::of::<T>()) || T::name(&self.cfg) == "JsonValue" {
            return;
        }
        // Only declared types have a file of their own; `string`, arrays and options do not.
        if T::output_path().is_some() {
            self.decls.insert(T::ident(&self.cfg), T::decl(&self.cfg));
        }
        T::visit_dependencies(self);
    }
}

/// The file as it should be.
fn generated() -> String {
    let mut collect = Collect {
        cfg: Config::new().with_large_int("number"),
        decls: BTreeMap::new(),
        seen: HashSet::new(),
    };
    roots(&mut collect);
    let mut out = String::from(
        "// Generated from the Rust types by `src-tauri/src/desktop/bindings.rs`; do not edit.\n\
         // IPYBOX_BLESS=1 cargo test -p ipybox --lib desktop::bindings writes it again.\n\
         import type { JsonValue } from '../util/json';\n",
    );
    for decl in collect.decls.values() {
        out.push('\n');
        out.push_str("export ");
        out.push_str(decl);
        out.push('\n');
    }
    out
}

#[test]
fn the_windows_types_are_generated_from_the_rust_ones() {
    let want = generated();
    if std::env::var_os("IPYBOX_BLESS").is_some() {
        std::fs::write(GENERATED, &want).expect("writing the generated types");
        return;
    }
    let have = std::fs::read_to_string(GENERATED).unwrap_or_default();
    assert!(
        have == want,
        "ui/src/generated/backend.ts is stale: run IPYBOX_BLESS=1 cargo test -p ipybox --lib desktop::bindings"
    );
}

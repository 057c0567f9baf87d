//! Kernel code calling MCP tools through the generated API, against the fixture server:
//! values, approval (accept, reject, timeout, timeout budget), content blocks, tool errors,
//! crashes, reset, concurrency.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Error, Event, ServerParams, StreamOptions};
use ipybox_tests::{run_with, workspace};

fn fixture() -> ServerParams {
    ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap()
}

async fn executor_with_fixture(ws: &std::path::Path) -> CodeExecutor {
    let e = CodeExecutor::builder()
        .working_dir(ws)
        .approval_timeout(Duration::from_secs(2))
        .build();
    let generated = e.register_mcp_server("fx", &fixture()).await.unwrap();
    assert!(
        generated.modules.contains(&"echo".to_owned()),
        "{generated:?}"
    );
    e.start().await.unwrap();
    e
}

#[tokio::test]
async fn generated_modules_call_tools_with_approval() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = "from mcptools.fx.echo import Params, run\nprint(run(Params(text='hello')))\n\
                from mcptools.fx import add\nr = add.run(add.Params(a=2, b=40))\nprint(type(r).__name__, r.sum)";
    let (r, seen) = run_with(&e, code, None, |_| Some(true)).await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("hello\nResult 42"),
        "text and structured results"
    );
    assert_eq!(seen.len(), 2, "each call asked for approval: {seen:?}");
    assert!(
        seen[0].starts_with("fx.echo(") && seen[0].contains("hello"),
        "{seen:?}"
    );

    // Arguments go out under their schema names, even for Python keywords and dashes.
    // The server answers with what it received (and rejects unknown field names).
    let code = "from mcptools.fx import odd_names as o\nr = o.run(o.Params(from_='a', class_=1, type_name='c'))\nprint(sorted(r.model_dump(by_alias=True, exclude_none=True)))";
    let (r, _) = run_with(&e, code, None, |_| Some(true)).await;
    let text = r.unwrap().text.unwrap();
    assert!(
        text.contains("'from'") && text.contains("'class'") && text.contains("'type-name'"),
        "{text}"
    );
    assert!(!text.contains("from_"), "Python names are not sent: {text}");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn rejection_and_approval_timeout_raise_in_the_kernel_and_the_tool_does_not_run() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = "from mcptools.fx import echo, counter\nfrom mcptools._runtime import ApprovalRejected\n\
                try:\n    echo.run(echo.Params(text='x'))\nexcept ApprovalRejected as err:\n    print('rejected:', err)";
    let (r, _) = run_with(&e, code, None, |_| Some(false)).await;
    let text = r.unwrap().text.unwrap();
    assert!(
        text.starts_with("rejected: fx.echo:"),
        "the exception names server and tool: {text}"
    );

    // A timeout is a rejection: `except ApprovalRejected` catches it too.
    let code = "from mcptools._runtime import ApprovalRejected, ApprovalTimeout\ntry:\n    echo.run(echo.Params(text='x'))\nexcept ApprovalRejected as err:\n    print('timeout:' if isinstance(err, ApprovalTimeout) else 'other:', err)";
    let t = Instant::now();
    let (r, _) = run_with(&e, code, None, |_| None).await;
    assert!(
        r.unwrap().text.unwrap().starts_with("timeout: fx.echo"),
        "nobody answered within approval_timeout"
    );
    assert!(
        t.elapsed() >= Duration::from_secs(2),
        "waited the approval timeout"
    );

    // Only approved calls ran: the counter counts calls that reached the server.
    let (r, _) = run_with(&e, "print(counter.run(counter.Params()))", None, |_| {
        Some(true)
    })
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("1"),
        "rejected and timed-out calls never reached the server"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn the_execution_timeout_does_not_count_approval_time() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_timeout(Duration::from_secs(10))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let mut s = e.stream(
        "from mcptools.fx import echo\nprint(echo.run(echo.Params(text='late')))",
        StreamOptions {
            timeout: Some(Duration::from_secs(1)),
            ..Default::default()
        },
    );
    let mut result = None;
    while let Some(ev) = s.next().await {
        match ev.unwrap() {
            Event::ApprovalRequest(r) => {
                tokio::time::sleep(Duration::from_secs(2)).await;
                r.accept();
            }
            Event::Result(r) => result = Some(r),
            _ => {}
        }
    }
    assert_eq!(
        result.unwrap().text.as_deref(),
        Some("late"),
        "2 s of approval wait did not trip the 1 s timeout"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn content_blocks_tool_errors_and_crashes() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = "from mcptools.fx import image\nblocks = image.run_blocks(image.Params())\n\
                img = [b for b in blocks if b.type == 'image'][0]\nprint(img.mime_type, img.data[:8] == b'\\x89PNG\\r\\n\\x1a\\n')";
    let r = e.execute(code, None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("image/png True"),
        "images reach kernel code as bytes"
    );

    let code = "from mcptools.fx import fail\nfrom mcptools._runtime import ToolError\ntry:\n    fail.run(fail.Params(message='boom'))\nexcept ToolError as err:\n    print(type(err).__name__, err)";
    let r = e.execute(code, None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("ToolError fx.fail: boom"),
        "a tool error raises with the server's message"
    );

    let code = "from mcptools.fx import crash, counter\ntry:\n    crash.run(crash.Params())\nexcept Exception as err:\n    print(type(err).__name__)\nprint(counter.run(counter.Params()))";
    let r = e.execute(code, None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("ToolServerError\n1"),
        "a crash fails the call; the next call restarts the server"
    );

    e.execute("counter.run(counter.Params())", None)
        .await
        .unwrap();
    e.reset().await.unwrap();
    let r = e
        .execute(
            "from mcptools.fx import counter\nprint(counter.run(counter.Params()))",
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("1"),
        "reset closes MCP sessions; they restart lazily"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_hundred_concurrent_calls_from_kernel_threads() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = "from concurrent.futures import ThreadPoolExecutor\nfrom mcptools.fx import echo\n\
                with ThreadPoolExecutor(32) as pool:\n    out = list(pool.map(lambda i: echo.run(echo.Params(text=str(i))), range(100)))\n\
                print(out == [str(i) for i in range(100)])";
    let r = e
        .execute(code, Some(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("True"));
    e.stop().await.unwrap();
}

/// Python defining `raw(request)`: a request written by hand on the kernel's stdin channel,
/// as an attacker's cell would, and its answer.
const RAW_REQUEST: &str = r#"import json, uuid, ipybox_channel as ch
def raw(req):
    ident, parent = ch._parent()
    got = ch._ask(uuid.uuid4().hex, {"prompt": "", "password": False, "ipybox": req}, ident, parent)
    return json.loads(got["value"])
"#;

/// A request ipybox cannot read (no id, arguments that are not data) is answered with an
/// error at once, not left to hang the cell until its timeout.
#[tokio::test]
async fn a_malformed_channel_request_is_answered_at_once() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = RAW_REQUEST.to_owned()
        + r#"import time
t0 = time.monotonic()
print("no id", raw({"v": 1, "server": "fx", "tool": "echo", "args": {}})["error"])
print("not an object", raw([1, 2, 3])["error"])
print("fast", time.monotonic() - t0 < 5)
"#;
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(20)), |_| Some(true)).await;
    assert_eq!(
        r.expect("answered, not timed out").text.as_deref(),
        Some("no id bad_request\nnot an object bad_request\nfast True")
    );
    assert!(seen.is_empty(), "nothing reached approval: {seen:?}");
    e.stop().await.unwrap();
}

/// A request nested deeper than ipybox reads JSON (128 levels), or whose bytes are not UTF-8
/// (the kernel packs lone surrogates with `surrogateescape`), is refused at once — before, it
/// was dropped and the asking thread waited for the cell's timeout. One just shallow enough
/// is read and answered as any other.
#[tokio::test]
async fn a_deep_or_undecodable_channel_request_is_answered_at_once() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = RAW_REQUEST.to_owned()
        + r#"import sys, time
sys.setrecursionlimit(100_000)  # for json.dumps of 10,000 levels
def nested(depth):
    x = []
    for _ in range(depth - 1):
        x = [x]
    return x
def timed(name, req, why):
    t0 = time.monotonic()
    answer = raw(req)
    print(name, answer.get("error"), why in answer.get("message", ""), time.monotonic() - t0 < 2)
call = {"v": 1, "server": "fx", "tool": "echo"}
# Arguments nested `depth` deep: the request is one deeper.
timed("126", dict(call, id=uuid.uuid4().hex, server="nope", args={"x": nested(125)}), "nope")
for depth in (127, 200, 10_000):
    timed(str(depth), dict(call, id=uuid.uuid4().hex, args={"x": nested(depth - 1)}), "recursion limit")
timed("utf8", dict(call, id=uuid.uuid4().hex + "\udcff", args={"text": "x"}), "UTF-8")
"#;
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(30)), |_| Some(true)).await;
    assert_eq!(
        r.expect("answered, not timed out").text.as_deref(),
        Some(
            "126 unknown_server True True\n127 bad_request True True\n200 bad_request True True\n10000 bad_request True True\nutf8 bad_request True True"
        ),
        "each request answered within two seconds, for its reason: read when it can be, refused when not"
    );
    assert!(seen.is_empty(), "nothing reached approval: {seen:?}");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn kernel_code_cannot_bypass_the_tool_server_rules() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    // Requests written by hand on the kernel's stdin channel, as an attacker's cell would.
    let code = RAW_REQUEST.to_owned()
        + r#"def call(**kw):
    return raw(dict({"v": 1, "id": uuid.uuid4().hex, "server": "fx", "tool": "echo", "args": {"text": "x"}}, **kw))
print("params", call(server_params={"command": "sh", "args": ["-c", "touch pwned"]})["error"])
print("command", call(command="sh")["error"])
print("unregistered", call(server="evil")["error"])
print("args", call(args=[1, 2])["error"])
print("part", raw({"v": 1, "id": "nope", "part": 1})["error"])
print("shell", call(server="ipybox", tool="rm", args={"command": "x"})["error"])
"#;
    let (r, seen) = run_with(&e, &code, None, |_| Some(false)).await;
    let text = r.unwrap().text.unwrap();
    assert_eq!(
        text,
        "params bad_request\ncommand bad_request\nunregistered unknown_server\nargs bad_request\npart bad_request\nshell bad_request",
        "every bypass attempt fails"
    );
    assert!(seen.is_empty(), "none of them reached approval: {seen:?}");
    assert!(
        !ws.path().join("pwned").exists(),
        "no command from the kernel ran"
    );

    // Rewriting the registry from the kernel does not change what this session runs.
    let home = ipybox::setup::ipybox_home().unwrap();
    let reg = ipybox::WorkspaceState::new(&home, ws.path())
        .dir()
        .join("servers.json");
    let code = format!(
        "import json\np = {:?}\nd = json.load(open(p))\nd['servers']['fx'] = {{'command': 'sh', 'args': ['-c', 'touch pwned2']}}\njson.dump(d, open(p, 'w'))\n\
         from mcptools.fx import echo\nprint(echo.run(echo.Params(text='still fixture')))",
        reg.to_str().unwrap()
    );
    let (r, _) = run_with(&e, &code, None, |_| Some(true)).await;
    assert_eq!(r.unwrap().text.as_deref(), Some("still fixture"));
    e.reset().await.unwrap();
    let (r, _) = run_with(
        &e,
        "from mcptools.fx import echo\nprint(echo.run(echo.Params(text='after reset')))",
        None,
        |_| Some(true),
    )
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("after reset"),
        "the session's registry is held in memory"
    );
    assert!(
        !ws.path().join("pwned2").exists(),
        "the rewritten registry was not used"
    );
    e.stop().await.unwrap();
}

/// Guards: only the approval handler decides a call (the person, a rule), never a message
/// from the kernel — a copy of a waiting request or a new one claiming the person's approval
/// stays undecided until it times out — and an answer belongs to its call: a reused call id
/// gets that call's answer again and runs nothing (approval is not a token for other
/// arguments). Were any of these honoured, a marker file would be written.
#[tokio::test]
async fn kernel_code_cannot_decide_its_own_calls() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = ipybox_tests::self_approval_attempts(ws.path());
    let (r, seen) = run_with(&e, &code, Some(Duration::from_secs(60)), |r| {
        (r.tool_name() == "echo").then_some(true)
    })
    .await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some(ipybox_tests::SELF_APPROVAL_REFUSED),
        "no call was decided by the kernel"
    );
    assert_eq!(
        seen.len(),
        3,
        "the person saw the waiting call, the one claiming approval and the echo: {seen:?}"
    );
    let written: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-marker"))
        .collect();
    assert!(written.is_empty(), "nothing was written: {written:?}");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn calls_from_threads_that_outlive_their_cell_are_rejected() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = "import threading, time\nfrom mcptools.fx import echo, counter\nresults = []\n\
                def later():\n    time.sleep(1.0)\n    try:\n        results.append(echo.run(echo.Params(text='sneaky')))\n    except Exception as err:\n        results.append(type(err).__name__)\n\
                threading.Thread(target=later).start()";
    let (r, seen) = run_with(&e, code, None, |_| Some(true)).await;
    r.unwrap();
    assert!(seen.is_empty());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = e.execute("print(results)", None).await.unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("['ApprovalRejected']"),
        "a call made between cells is rejected"
    );
    let r = e
        .execute("print(counter.run(counter.Params()))", None)
        .await
        .unwrap();
    assert_eq!(
        r.text.as_deref(),
        Some("1"),
        "the rejected call never reached the server"
    );
    let err = e
        .execute("from mcptools.fx import nope", None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::CodeExecution { .. }));
    e.stop().await.unwrap();
}

#[derive(Debug)]
struct RejectEcho;

impl ipybox::ApprovalHandler for RejectEcho {
    fn handle(
        &self,
        request: ipybox::ApprovalRequest,
    ) -> futures_util::future::BoxFuture<'static, ()> {
        Box::pin(async move {
            if request.tool_name() == "echo" {
                request.reject()
            } else {
                request.accept()
            }
        })
    }
}

#[tokio::test]
async fn an_application_wide_handler_decides_and_unknown_tools_are_named() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .approval_handler(std::sync::Arc::new(RejectEcho))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let code = "from mcptools.fx import echo, add\nfrom mcptools._runtime import ApprovalRejected\n\
                try:\n    echo.run(echo.Params(text='x'))\nexcept ApprovalRejected:\n    print('echo rejected')\n\
                print(add.run(add.Params(a=1, b=1)).sum)";
    // execute() would auto-approve; with a handler, the handler decides.
    let r = e.execute(code, None).await.unwrap();
    assert_eq!(r.text.as_deref(), Some("echo rejected\n2"));
    let code = "from mcptools._runtime import call_tool, ToolServerError\ntry:\n    call_tool('fx', 'no_such_tool', {})\nexcept ToolServerError as err:\n    print(err)";
    let r = e.execute(code, None).await.unwrap();
    let text = r.text.unwrap();
    assert!(
        text.contains("has no tool \"no_such_tool\"") && text.contains("echo"),
        "{text}"
    );
    e.stop().await.unwrap();
}

/// Only a tool its server lists is asked about: a made-up name (one the server does not list,
/// or one no MCP tool can have) is refused before anyone is asked, with the server stopped or
/// running, and recorded as refused by the session's policy.
#[tokio::test]
async fn a_tool_the_server_does_not_list_is_refused_before_anyone_is_asked() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let mut events = e.subscribe();
    let code = "from mcptools._runtime import call_tool, ToolServerError\n\
                def made_up(name):\n    try:\n        call_tool('fx', name, {})\n    except ToolServerError as err:\n        return 'has no tool' in str(err), 'echo' in str(err)\n\
                print(made_up('no_such_tool'), made_up('two words'), made_up('x' * 129))\n\
                from mcptools.fx import echo\necho.run(echo.Params(text='the server runs now'))\n\
                print(made_up('no_such_tool'))";
    let (r, seen) = run_with(&e, code, None, |_| Some(true)).await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("(True, True) (True, False) (True, False)\n(True, True)"),
        "refused, naming the server's tools when the name could be one"
    );
    assert_eq!(
        seen.len(),
        1,
        "only the real call was asked about: {seen:?}"
    );
    let mut refused = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ipybox::SessionEvent::ToolCall {
            request,
            decided_by: ipybox::DecidedBy::Policy,
            ..
        } = event
        {
            refused.push(request.tool_name().to_owned());
        }
    }
    assert_eq!(
        refused,
        [
            "no_such_tool",
            "two words",
            &"x".repeat(129),
            "no_such_tool"
        ],
        "each made-up call is recorded as refused"
    );
    e.stop().await.unwrap();
}

/// A tool that does not answer (stuck, or its answer cannot be read) fails the call after
/// the per-call timeout instead of holding the cell until the execution timeout; the next
/// call gets a fresh server.
#[tokio::test]
async fn a_tool_call_that_does_not_answer_times_out_on_its_own() {
    let ws = workspace();
    let e = CodeExecutor::builder()
        .working_dir(ws.path())
        .mcp_call_timeout(Duration::from_secs(1))
        .build();
    e.register_mcp_server("fx", &fixture()).await.unwrap();
    e.start().await.unwrap();
    let started = Instant::now();
    let (r, _) = run_with(
        &e,
        "from mcptools.fx.sleep import Params, run\nrun(Params(seconds=60))",
        Some(Duration::from_secs(120)),
        |_| Some(true),
    )
    .await;
    let took = started.elapsed();
    match r {
        Err(Error::CodeExecution { error, .. }) => {
            assert_eq!(error.name, "ToolServerError", "{error}");
            assert!(error.value.contains("did not answer"), "{error}");
        }
        other => panic!("the call must time out: {other:?}"),
    }
    assert!(
        took < Duration::from_secs(20),
        "the call timeout applies, not the tool's 60 s: {took:?}"
    );
    let (r, _) = run_with(
        &e,
        "from mcptools.fx.echo import Params, run\nprint(run(Params(text='again')))",
        None,
        |_| Some(true),
    )
    .await;
    assert_eq!(r.unwrap().text.as_deref(), Some("again"));
    e.stop().await.unwrap();
}

#[tokio::test]
async fn calls_from_asyncio_tasks_and_threads_at_once() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = r#"
import asyncio, threading
from mcptools.fx import echo
threaded = []
def worker(i):
    for j in range(5):
        threaded.append(echo.run(echo.Params(text=f"t{i}.{j}")))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
async def task(i):
    return await asyncio.to_thread(echo.run, echo.Params(text=f"a{i}"))
gathered = await asyncio.gather(*(task(i) for i in range(30)))
direct = echo.run(echo.Params(text="in the event loop"))
async def spawned():
    return echo.run(echo.Params(text="in a task"))
from_task = await asyncio.create_task(spawned())
for t in threads:
    t.join()
print(gathered == [f"a{i}" for i in range(30)], sorted(threaded) == sorted(f"t{i}.{j}" for i in range(8) for j in range(5)), direct, from_task)
"#;
    let (r, seen) = run_with(&e, code, Some(Duration::from_secs(60)), |_| Some(true)).await;
    assert_eq!(
        r.unwrap().text.as_deref(),
        Some("True True in the event loop in a task")
    );
    assert_eq!(seen.len(), 72, "every call was asked for once");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn input_works_beside_tool_calls() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    let code = r#"
import threading
from mcptools.fx import echo
out = []
def calls():
    for i in range(30):
        out.append(echo.run(echo.Params(text=str(i))))
t = threading.Thread(target=calls)
t.start()
name = input("name? ")
secret = __import__("getpass").getpass("secret? ")
t.join()
print(name, secret, out == [str(i) for i in range(30)])
"#;
    let mut s = e.stream(
        code,
        StreamOptions {
            input: true,
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        },
    );
    let (mut prompts, mut approvals) = (Vec::new(), 0);
    let result = loop {
        match s.next().await.expect("a result") {
            Ok(Event::ApprovalRequest(r)) => {
                approvals += 1;
                r.accept();
            }
            Ok(Event::Input(i)) => {
                prompts.push((i.prompt().to_owned(), i.password()));
                i.reply(if i.password() { "s3cret" } else { "Ada" });
            }
            Ok(Event::Result(r)) => break r,
            Ok(_) => {}
            Err(err) => panic!("{err}"),
        }
    };
    assert_eq!(result.text.as_deref(), Some("Ada s3cret True"));
    assert_eq!(
        prompts,
        [("name? ".to_owned(), false), ("secret? ".to_owned(), true)]
    );
    assert_eq!(approvals, 30);

    // Without a prompt to answer, input() raises at once, tool calls still work.
    let r = e
        .execute(
            "from mcptools.fx import echo\ntry:\n    input('x')\nexcept Exception as err:\n    print(type(err).__name__, echo.run(echo.Params(text='still')))",
            Some(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("StdinNotImplementedError still"));
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_long_answer_arrives_whole_in_parts() {
    let ws = workspace();
    let e = executor_with_fixture(ws.path()).await;
    // 6 MB through echo and back: more than one part each way of the stdin channel.
    let code = "from mcptools.fx import echo\ntext = 'é' * 3_000_000\nback = echo.run(echo.Params(text=text))\nprint(len(back), back == text)";
    let r = e
        .execute(code, Some(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(r.text.as_deref(), Some("3000000 True"));
    e.stop().await.unwrap();
}

//! Rich outputs as a notebook renders them, in the kernel's order: MIME bundles (a pandas
//! DataFrame as `text/html`, a plot as `image/png`), display updates by id, `clear_output`,
//! errors with ANSI tracebacks, the execution count, and `input()`/`getpass()` answered by
//! the caller.

#![allow(clippy::unwrap_used)]

use futures_util::StreamExt;
use ipybox::{CodeExecutionResult, CodeExecutor, Event, Output, StreamOptions};
use ipybox_tests::{started, workspace};

fn options() -> StreamOptions {
    StreamOptions {
        timeout: Some(std::time::Duration::from_secs(120)),
        outputs: true,
        input: true,
        ..Default::default()
    }
}

/// Every output of `code`, and its result (or error).
async fn outputs(
    e: &CodeExecutor,
    code: &str,
) -> (Vec<Output>, ipybox::Result<CodeExecutionResult>) {
    let mut s = e.stream(code, options());
    let mut seen = Vec::new();
    while let Some(event) = s.next().await {
        match event {
            Ok(Event::Output(o)) => seen.push(o),
            Ok(Event::Result(r)) => return (seen, Ok(r)),
            Ok(_) => {}
            Err(err) => return (seen, Err(err)),
        }
    }
    panic!("no result")
}

fn mime(o: &Output) -> Vec<String> {
    match o {
        Output::DisplayData { data, .. }
        | Output::ExecuteResult { data, .. }
        | Output::UpdateDisplayData { data, .. } => data.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn display_updates_and_clear_output_arrive_in_order() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let code = r#"
from IPython.display import display, clear_output, HTML
h = display(HTML("<b>0</b>"), display_id=True)
for i in range(1, 4):
    h.update(HTML(f"<b>{i}</b>"))
print("before clear")
clear_output(wait=True)
print("after clear")
"#;
    let (seen, result) = outputs(&e, code).await;
    result.unwrap();
    let kinds: Vec<String> = seen
        .iter()
        .map(|o| match o {
            Output::DisplayData { data, .. } => format!("display {}", data["text/html"]),
            Output::UpdateDisplayData { data, .. } => format!("update {}", data["text/html"]),
            Output::Stream { text, .. } => format!("stream {}", text.trim()),
            Output::ClearOutput { wait } => format!("clear wait={wait}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "display \"<b>0</b>\"",
            "update \"<b>1</b>\"",
            "update \"<b>2</b>\"",
            "update \"<b>3</b>\"",
            "stream before clear",
            "clear wait=true",
            "stream after clear",
        ],
        "in the order the kernel sent them"
    );
    let id = |o: &Output| match o {
        Output::DisplayData { display_id, .. } => display_id.clone(),
        Output::UpdateDisplayData { display_id, .. } => Some(display_id.clone()),
        _ => None,
    };
    assert!(
        id(&seen[0]).is_some() && id(&seen[0]) == id(&seen[3]),
        "one display id"
    );
    e.stop().await.unwrap();
}

#[tokio::test]
async fn a_dataframe_is_html_a_plot_is_png_and_an_error_keeps_its_colours() {
    let ws = workspace();
    let e = started(ws.path()).await;
    if e.execute("import pandas", None).await.is_err() {
        e.install_package("pandas").await.unwrap();
    }
    let (seen, result) = outputs(
        &e,
        "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})",
    )
    .await;
    result.unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(matches!(seen[0], Output::ExecuteResult { .. }));
    assert!(mime(&seen[0]).contains(&"text/html".to_owned()), "{seen:?}");

    let (seen, result) = outputs(
        &e,
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    )
    .await;
    let result = result.unwrap();
    let plot = seen
        .iter()
        .find(|o| mime(o).contains(&"image/png".to_owned()))
        .expect("a PNG display");
    assert_eq!(
        plot.terminal_text(),
        None,
        "no <Figure …> text for an image"
    );
    assert_eq!(result.images.len(), 1, "and it is saved as a file");
    assert_eq!(result.image_data.len(), 1);
    assert!(result.image_data[0].data.starts_with(b"\x89PNG"));
    assert!(
        !result.text.unwrap_or_default().contains("<Figure"),
        "the result's text has no <Figure …> either"
    );

    let (seen, result) = outputs(&e, "1/0").await;
    assert!(result.is_err());
    match seen.last() {
        Some(Output::Error {
            ename, traceback, ..
        }) => {
            assert_eq!(ename, "ZeroDivisionError");
            assert!(
                traceback.iter().any(|l| l.contains('\u{1b}')),
                "ANSI colours are kept for a UI"
            );
        }
        other => panic!("an error output last: {other:?}"),
    }
    e.stop().await.unwrap();
}

#[tokio::test]
async fn input_and_getpass_are_answered_by_the_caller() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let mut s = e.stream(
        "import getpass\nname = input('Name: ')\nsecret = getpass.getpass('Secret: ')\nprint(name, len(secret))",
        options(),
    );
    let mut prompts = Vec::new();
    let mut result = None;
    while let Some(event) = s.next().await {
        match event.unwrap() {
            Event::Input(request) => {
                prompts.push((request.prompt().to_owned(), request.password()));
                request.reply(if request.password() { "hunter2" } else { "Ada" });
            }
            Event::Result(r) => result = Some(r),
            _ => {}
        }
    }
    assert_eq!(
        prompts,
        [("Name: ".to_owned(), false), ("Secret: ".to_owned(), true)]
    );
    assert_eq!(result.unwrap().text.as_deref(), Some("Ada 7"));
    // Unanswered: the code is interrupted rather than fed a made-up answer.
    let mut s = e.stream("x = input('? ')", options());
    let mut err = None;
    while let Some(event) = s.next().await {
        match event {
            Ok(Event::Input(request)) => drop(request),
            Ok(_) => {}
            Err(e) => err = Some(e),
        }
    }
    let err = err.expect("an error");
    assert!(err.to_string().contains("KeyboardInterrupt"), "{err}");
    e.stop().await.unwrap();
}

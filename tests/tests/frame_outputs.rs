//! A data frame shown as a cell's result says which variable holds it, so the notebook can
//! offer "Open in grid" on the output: the kernel's display hook puts the name in the
//! result's metadata (`{"ipybox": {"frame": NAME}}`) when a user variable holds that very
//! frame, and nowhere else. A name given by a notebook file is only ever looked up: opening a
//! page of it runs nothing.

#![allow(clippy::unwrap_used)]

use futures_util::StreamExt;
use ipybox::{CodeExecutor, Event, FrameQuery, Output, StreamOptions};
use ipybox_tests::{started, workspace};
use serde_json::Value;

async fn with_pandas(e: &CodeExecutor) {
    if e.execute("import pandas", None).await.is_err() {
        e.install_package("pandas").await.unwrap();
    }
}

/// The metadata of the cell's last execute_result (`None`: the cell showed no result).
async fn result_metadata(e: &CodeExecutor, code: &str) -> Option<Value> {
    outputs_metadata(e, code, false).await
}

/// The metadata of the cell's last display_data.
async fn display_metadata(e: &CodeExecutor, code: &str) -> Option<Value> {
    outputs_metadata(e, code, true).await
}

async fn outputs_metadata(e: &CodeExecutor, code: &str, displayed: bool) -> Option<Value> {
    let options = StreamOptions {
        outputs: true,
        ..Default::default()
    };
    let mut s = e.stream(code, options);
    let mut metadata = None;
    while let Some(event) = s.next().await {
        match event.unwrap() {
            Event::Output(Output::ExecuteResult { metadata: m, .. }) if !displayed => {
                metadata = Some(m);
            }
            Event::Output(Output::DisplayData { metadata: m, .. }) if displayed => {
                metadata = Some(m);
            }
            _ => {}
        }
    }
    metadata
}

fn frame_of(metadata: &Value) -> Option<&str> {
    metadata.get("ipybox")?.get("frame")?.as_str()
}

#[tokio::test]
async fn a_frame_shown_as_a_result_names_the_variable_that_holds_it() {
    let ws = workspace();
    let e = started(ws.path()).await;
    with_pandas(&e).await;
    e.execute(
        "import pandas as pd\nsales = pd.DataFrame({'n': range(1000), 'g': [i % 7 for i in range(1000)]})",
        None,
    )
    .await
    .unwrap();

    let shown = result_metadata(&e, "sales").await.expect("a result");
    assert_eq!(
        frame_of(&shown),
        Some("sales"),
        "the frame a variable holds names it: {shown}"
    );
    // The frame just shown, held now only by IPython's own names (`_`, `Out`): no user
    // variable.
    let only_ipython = result_metadata(&e, "del sales\n_").await.expect("a result");
    assert_eq!(
        frame_of(&only_ipython),
        None,
        "IPython's names are not the user's variables: {only_ipython}"
    );
    e.execute("sales = _", None).await.unwrap();
    let copy = result_metadata(&e, "sales.head()").await.expect("a result");
    assert_eq!(
        frame_of(&copy),
        None,
        "a new frame no variable holds names nothing (opening `sales` would show other rows): {copy}"
    );
    let number = result_metadata(&e, "n = 3\nn").await.expect("a result");
    assert_eq!(frame_of(&number), None, "only frames are named: {number}");
    let series = result_metadata(&e, "col = sales['n']\ncol")
        .await
        .expect("a result");
    assert_eq!(
        frame_of(&series),
        None,
        "a series is no frame the grid opens: {series}"
    );
    let displayed = display_metadata(&e, "display(sales)\nprint('after')")
        .await
        .expect("a display");
    assert_eq!(
        frame_of(&displayed),
        Some("sales"),
        "display(df) names the variable too: {displayed}"
    );
    let displayed_copy = display_metadata(&e, "display(sales.tail())")
        .await
        .expect("a display");
    assert_eq!(frame_of(&displayed_copy), None, "{displayed_copy}");
}

#[tokio::test]
async fn a_name_from_a_notebook_file_is_looked_up_never_run() {
    let ws = workspace();
    let e = started(ws.path()).await;
    with_pandas(&e).await;
    let marker = ws.path().join("ran");
    e.execute(
        "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})",
        None,
    )
    .await
    .unwrap();
    // What a crafted notebook's metadata could name: code, not a variable.
    for name in [
        format!(
            "open({:?}, 'w').write('x') or df",
            marker.display().to_string()
        ),
        format!("df; open({:?}, 'w')", marker.display().to_string()),
        "__import__('os')".to_owned(),
    ] {
        let q = FrameQuery {
            name: name.clone(),
            offset: 0,
            limit: 10,
            sort: vec![],
            filters: vec![],
            nulls: false,
        };
        let refused = e.frame_page(&q).await.unwrap_err();
        assert!(
            refused.to_string().contains("there is no variable named"),
            "{name}: {refused}"
        );
    }
    assert!(!marker.exists(), "no name reached the kernel as code");
    let page = e
        .frame_page(&FrameQuery {
            name: "df".into(),
            offset: 0,
            limit: 10,
            sort: vec![],
            filters: vec![],
            nulls: false,
        })
        .await
        .unwrap();
    assert_eq!(page.total_rows, 3, "a real variable opens");
}

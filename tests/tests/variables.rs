//! The kernel's variables and a data grid over its frames, as a notebook's Variables tab asks
//! for them from a real kernel: names, types, shapes and sizes without IPython's own names,
//! modules or the generated tool API; a silent request that leaves no trace (no execution
//! count, no history, no output); values of the user's own classes never asked to describe
//! themselves; and pages of a million-row frame sorted and filtered in the kernel, with the
//! pandas expression that gives the same rows.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ipybox::{
    CodeExecutor, ErrorCode, Event, Filter, FilterOp, FrameQuery, ServerParams, SortKey,
    StreamOptions, Variable,
};
use ipybox_tests::{running_cell, started, workspace};

async fn with_pandas(e: &CodeExecutor) {
    if e.execute("import pandas", None).await.is_err() {
        e.install_package("pandas").await.unwrap();
    }
}

/// The execution count the kernel gives the next visible cell.
async fn next_count(e: &CodeExecutor) -> i64 {
    let options = StreamOptions {
        outputs: true,
        ..Default::default()
    };
    let mut s = e.stream("None", options);
    let mut count = None;
    // To the end: a stream dropped early interrupts its cell.
    while let Some(event) = s.next().await {
        if let Event::Started { execution_count } = event.unwrap() {
            count = execution_count;
        }
    }
    count.expect("the cell started with a count")
}

fn find<'a>(vars: &'a [Variable], name: &str) -> &'a Variable {
    vars.iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("{name} is listed: {vars:#?}"))
}

#[tokio::test]
async fn the_users_variables_are_listed_without_ipythons_modules_or_the_tool_api() {
    let ws = workspace();
    let e = CodeExecutor::builder().working_dir(ws.path()).build();
    let params = ServerParams::from_json(&serde_json::json!({
        "command": env!("CARGO_BIN_EXE_ipybox-fixture-mcp"),
        "args": ["stdio"],
    }))
    .unwrap();
    e.register_mcp_server("fx", &params).await.unwrap();
    e.start().await.unwrap();
    with_pandas(&e).await;
    e.execute(
        "import os, numpy as np, pandas as pd\n\
         from mcptools.fx.echo import Params, run\n\
         count = 42\ngreeting = 'hello'\nrows = [1, 2, 3]\n\
         grid = np.zeros((3, 4))\n\
         sales = pd.DataFrame({'a': range(5), 'b': list('vwxyz')})\n\
         def helper():\n    return 1\n\
         _private = 1\n\
         x = 'a\\u202eb\\n<b>'",
        None,
    )
    .await
    .unwrap();
    e.execute("count", None).await.unwrap();

    let before = next_count(&e).await;
    let listed = e.kernel_variables().await.unwrap();
    let again = e.kernel_variables().await.unwrap();
    assert_eq!(listed, again, "listing changes nothing it lists");
    assert_eq!(
        next_count(&e).await,
        before + 1,
        "the listing is silent: the execution count moved only for the visible cells"
    );
    let history = e.execute("print(len(In), len(Out))", None).await.unwrap();
    let history = history.text.unwrap();
    assert_eq!(
        history,
        format!("{} 1", before + 3),
        "nothing of the listing in the input or output history"
    );

    let vars = &listed.variables;
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    for hidden in [
        "In",
        "Out",
        "_",
        "_1",
        "_i",
        "_private",
        "get_ipython",
        "exit",
        "os",
        "np",
        "pd",
        "run",
        "Params",
    ] {
        assert!(
            !names.contains(&hidden),
            "{hidden} is not one of the user's variables: {names:?}"
        );
    }
    assert_eq!(
        names,
        ["count", "greeting", "grid", "helper", "rows", "sales", "x"],
        "the user's variables, by name"
    );
    let count = find(vars, "count");
    assert_eq!(
        (count.type_name.as_str(), count.repr.as_deref()),
        ("int", Some("42"))
    );
    assert!(count.size.is_some_and(|s| s > 0), "{count:?}");
    let greeting = find(vars, "greeting");
    assert_eq!(
        (greeting.length, greeting.repr.as_deref()),
        (Some(5), Some("'hello'"))
    );
    assert_eq!(find(vars, "rows").length, Some(3));
    let grid = find(vars, "grid");
    assert_eq!(
        (grid.type_name.as_str(), grid.shape.as_deref(), grid.size),
        ("ndarray", Some(&[3, 4][..]), Some(96)),
        "an array's shape and bytes"
    );
    let sales = find(vars, "sales");
    assert_eq!(
        (sales.shape.as_deref(), sales.frame.as_deref()),
        (Some(&[5, 2][..]), Some("pandas")),
        "a frame has its shape and opens in the grid"
    );
    assert_eq!(sales.repr.as_deref(), Some("columns: a, b"));
    assert_eq!(find(vars, "helper").type_name, "function");
    assert_eq!(
        find(vars, "x").repr.as_deref(),
        Some("'a\\u202eb\\n<b>'"),
        "a value is its repr: one line, as text"
    );
}

#[tokio::test]
async fn a_hostile_value_is_never_asked_to_describe_itself() {
    let ws = workspace();
    let e = started(ws.path()).await;
    // Every hook a lister could call sleeps for a minute and counts the call.
    e.execute(
        "import time\n\
         asked = []\n\
         class Hostile:\n\
         \x20   def __repr__(self): asked.append('repr'); time.sleep(60)\n\
         \x20   def __str__(self): asked.append('str'); time.sleep(60)\n\
         \x20   def __len__(self): asked.append('len'); raise RuntimeError('no')\n\
         \x20   def __sizeof__(self): asked.append('sizeof'); time.sleep(60)\n\
         \x20   def __getattr__(self, name): asked.append(name); time.sleep(60)\n\
         \x20   @property\n\
         \x20   def __class__(self): asked.append('class'); time.sleep(60)\n\
         \x20   @property\n\
         \x20   def shape(self): asked.append('shape'); time.sleep(60)\n\
         class Raises(list):\n\
         \x20   def __repr__(self): asked.append('list repr'); raise ValueError('boom')\n\
         hostile = Hostile()\n\
         inside = [Hostile(), 1]\n\
         raises = Raises([1, 2])\n\
         many = {f'v{i}': i for i in range(100)}\n\
         globals().update(many)",
        None,
    )
    .await
    .unwrap();
    let t = Instant::now();
    let listed = e.kernel_variables().await.unwrap();
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "a value that sleeps (60 s) when described does not hold the list up: {took:?}"
    );
    let vars = &listed.variables;
    let hostile = find(vars, "hostile");
    assert_eq!(
        (
            hostile.type_name.as_str(),
            hostile.repr.as_deref(),
            hostile.size,
            hostile.length
        ),
        ("Hostile", Some("<__main__.Hostile object>"), None, None),
        "a user-defined type shows its name only"
    );
    assert_eq!(
        find(vars, "inside").repr.as_deref(),
        Some("[<__main__.Hostile object>, 1]")
    );
    assert_eq!(
        find(vars, "raises").repr.as_deref(),
        Some("<__main__.Raises object>")
    );
    assert_eq!(vars.len(), 107, "all the variables: {:?}", vars.len());
    let asked = e.execute("print(asked)", None).await.unwrap();
    assert_eq!(
        asked.text.as_deref(),
        Some("[]"),
        "no code of the user's classes ran"
    );
}

#[tokio::test]
async fn variables_are_listed_while_a_cell_runs() {
    let ws = workspace();
    let e = started(ws.path()).await;
    e.execute("ready = True", None).await.unwrap();
    // A cell that runs far longer than the list takes, even on a busy machine.
    let s = running_cell(&e, "import time\nprint('busy', flush=True)\ntime.sleep(60)").await;
    let t = Instant::now();
    let listed = e.kernel_variables().await.unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the list does not wait for the running cell (60 s): {:?}",
        t.elapsed()
    );
    find(&listed.variables, "ready");
    drop(s);
    e.interrupt().await.unwrap();
}

fn query(name: &str) -> FrameQuery {
    FrameQuery {
        name: name.into(),
        offset: 0,
        limit: 100,
        sort: vec![],
        filters: vec![],
        nulls: false,
    }
}

#[tokio::test]
async fn a_million_row_frame_pages_sorts_and_filters_in_the_kernel() {
    let ws = workspace();
    let e = started(ws.path()).await;
    with_pandas(&e).await;
    e.execute(
        "import numpy as np, pandas as pd\n\
         n = np.arange(1_000_000)\n\
         df = pd.DataFrame({'n': n, 'g': n % 10, 'v': np.where(n % 3 == 0, np.nan, n * 0.5),\n\
         \x20                  's': np.where(n % 2 == 0, 'even', '<b>odd</b>')})\n\
         number = 7",
        None,
    )
    .await
    .unwrap();

    let first = e.frame_page(&query("df")).await.unwrap();
    assert_eq!((first.total_rows, first.rows), (1_000_000, 1_000_000));
    assert_eq!(first.cells.len(), 100, "one page");
    assert_eq!(
        first.cells[1],
        [Some("1"), Some("1"), Some("0.5"), Some("<b>odd</b>")].map(|c| c.map(String::from)),
        "cells as text"
    );
    assert_eq!(first.cells[0][2], None, "NaN is a missing value");
    assert!(
        first.columns.iter().all(|c| c.nulls.is_none()),
        "nulls are counted only when asked"
    );
    let types: Vec<&str> = first.columns.iter().map(|c| c.type_name.as_str()).collect();
    assert_eq!(&types[..3], ["int64", "int64", "float64"], "{types:?}");

    let mut q = query("df");
    q.offset = 999_950;
    q.nulls = true;
    let last = e.frame_page(&q).await.unwrap();
    assert_eq!(last.cells.len(), 50, "the last page is short");
    assert_eq!(last.index[0].as_deref(), Some("999950"));
    assert_eq!(
        last.columns[2].nulls,
        Some(333_334),
        "null counts of the whole frame"
    );

    let mut q = query("df");
    q.sort = vec![SortKey {
        column: 0,
        ascending: false,
    }];
    let sorted = e.frame_page(&q).await.unwrap();
    assert_eq!(sorted.cells[0][0].as_deref(), Some("999999"), "sorted down");

    let mut q = query("df");
    q.filters = vec![Filter {
        column: 1,
        op: FilterOp::Eq,
        value: "3".into(),
    }];
    q.sort = vec![SortKey {
        column: 2,
        ascending: true,
    }];
    let filtered = e.frame_page(&q).await.unwrap();
    assert_eq!(filtered.rows, 100_000, "one row in ten has g == 3");
    assert_eq!(
        filtered.cells[0][0].as_deref(),
        Some("13"),
        "the smallest v where g == 3 (n = 3 has no v)"
    );
    q.offset = filtered.rows - 1;
    let tail = e.frame_page(&q).await.unwrap();
    assert_eq!(tail.cells[0][2], None, "missing values sort last");

    // "Copy as code": the expression gives the same rows in the kernel.
    assert_eq!(
        filtered.code,
        "df[(df['g'] == 3)].sort_values(['v'], ascending=[True])"
    );
    let check = e
        .execute(
            &format!(
                "print(({}).iloc[0]['n'], len({}))",
                filtered.code, filtered.code
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(check.text.as_deref(), Some("13 100000"));

    let mut q = query("df");
    q.filters = vec![Filter {
        column: 3,
        op: FilterOp::Contains,
        value: "<b>".into(),
    }];
    assert_eq!(e.frame_page(&q).await.unwrap().rows, 500_000);

    let mut q = query("df");
    q.filters = vec![Filter {
        column: 0,
        op: FilterOp::Gt,
        value: "lots".into(),
    }];
    let bad = e.frame_page(&q).await.unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidConfig);
    assert!(
        bad.to_string()
            .contains("'lots' is not a value of this column's type"),
        "a filter value of the wrong type says so: {bad}"
    );
    let not_frame = e.frame_page(&query("number")).await.unwrap_err();
    assert!(
        not_frame.to_string().contains("not a data frame"),
        "{not_frame}"
    );
    let odd = e
        .frame_page(&query("x'); import os; ('"))
        .await
        .unwrap_err();
    assert!(
        odd.to_string().contains("there is no variable named"),
        "a name is looked up, never run: {odd}"
    );
}

#[tokio::test]
async fn a_polars_frame_pages_sorts_and_filters_with_the_polars_expression() {
    let ws = workspace();
    let e = started(ws.path()).await;
    if e.execute("import polars", None).await.is_err() {
        e.install_package("polars").await.unwrap();
    }
    e.execute(
        "import polars as pl\n\
         pdf = pl.DataFrame({'n': range(100_000), 'g': [i % 10 for i in range(100_000)],\n\
         \x20                  'v': [None if i % 3 == 0 else i * 0.5 for i in range(100_000)]})",
        None,
    )
    .await
    .unwrap();
    let listed = e.kernel_variables().await.unwrap();
    let pdf = find(&listed.variables, "pdf");
    assert_eq!(
        (pdf.frame.as_deref(), pdf.shape.as_deref()),
        (Some("polars"), Some(&[100_000, 3][..]))
    );

    let mut q = query("pdf");
    q.nulls = true;
    q.filters = vec![Filter {
        column: 1,
        op: FilterOp::Eq,
        value: "3".into(),
    }];
    q.sort = vec![SortKey {
        column: 2,
        ascending: false,
    }];
    let page = e.frame_page(&q).await.unwrap();
    assert_eq!((page.kind.as_str(), page.rows), ("polars", 10_000));
    assert_eq!(page.columns[2].nulls, Some(33_334));
    assert_eq!(
        (page.index[0].as_deref(), page.cells[0][0].as_deref()),
        (Some("99983"), Some("99983")),
        "rows keep their position in the frame as their label (99993 has no v)"
    );
    assert_eq!(
        page.code,
        "pdf.filter((pl.col('g') == 3)).sort(['v'], descending=[True], nulls_last=True)"
    );
    let check = e
        .execute(
            &format!("print(({}).row(0)[0], ({}).height)", page.code, page.code),
            None,
        )
        .await
        .unwrap();
    assert_eq!(check.text.as_deref(), Some("99983 10000"));
    q.filters[0].value = "three".into();
    let bad = e.frame_page(&q).await.unwrap_err();
    assert!(
        bad.to_string()
            .contains("'three' is not a value of this column's type"),
        "{bad}"
    );
}

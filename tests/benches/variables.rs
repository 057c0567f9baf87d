//! Variables and data grid benchmark: the Variables tab's refresh after a cell in a kernel
//! holding 100 variables, and pages of a 10,000,000-row pandas frame (first page, a later
//! page, null counts, a sort, a filter, and pages of the sorted view).
//!
//! `cargo bench -p ipybox-tests --bench variables [-- --quick]`. Prints median/min/max per
//! figure and writes JSON to `target/bench/variables.json`. Needs pandas in the kernel's
//! environment (installed when missing).

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::future::Future;
use std::time::Instant;

use ipybox::{Filter, FilterOp, FrameQuery, SortKey};
use ipybox_tests::{started, workspace};

fn stats(name: &str, mut xs: Vec<f64>, json: &mut Vec<String>) {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = if xs.len() % 2 == 1 {
        xs[xs.len() / 2]
    } else {
        (xs[xs.len() / 2 - 1] + xs[xs.len() / 2]) / 2.0
    };
    let (min, max) = (xs[0], xs[xs.len() - 1]);
    println!(
        "{name:<52} ms  median {median:>9.2}  min {min:>9.2}  max {max:>9.2}  n {}",
        xs.len()
    );
    json.push(format!(
        "  \"{name}\": {{\"unit\": \"ms\", \"median\": {median}, \"min\": {min}, \"max\": {max}, \"n\": {}}}",
        xs.len()
    ));
}

async fn time<T, F: Future<Output = T>>(f: F) -> (f64, T) {
    let t = Instant::now();
    let out = f.await;
    (t.elapsed().as_secs_f64() * 1000.0, out)
}

fn query(offset: u64) -> FrameQuery {
    FrameQuery {
        name: "big".into(),
        offset,
        limit: 100,
        sort: vec![],
        filters: vec![],
        nulls: false,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 5 } else { 20 };
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let mut json = Vec::new();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("load average at start: {}", load.trim());
        let ws = workspace();
        let e = started(ws.path()).await;
        if e.execute("import pandas", None).await.is_err() {
            e.install_package("pandas").await.unwrap();
        }
        // 100 variables of the kinds a notebook holds: numbers, text, lists, dicts, arrays,
        // small frames.
        e.execute(
            "import numpy as np, pandas as pd\n\
             for i in range(100):\n\
             \x20   kind = i % 6\n\
             \x20   globals()[f'v{i}'] = [i, 'text ' * i, list(range(i)), {'k': i}, np.arange(i * 100), pd.DataFrame({'a': range(i)})][kind]\n\
             del i, kind",
            None,
        )
        .await
        .unwrap();
        let listed = e.kernel_variables().await.unwrap();
        assert_eq!(listed.variables.len(), 100, "the 100 variables");

        let mut refresh = Vec::new();
        let mut cell = Vec::new();
        for i in 0..n {
            let (ms, _) = time(e.execute(&format!("x = {i}"), None)).await;
            cell.push(ms);
            let (ms, listed) = time(e.kernel_variables()).await;
            assert_eq!(listed.unwrap().variables.len(), 101);
            refresh.push(ms);
        }
        let mut complete = Vec::new();
        for _ in 0..n {
            complete.push(time(e.complete("v1", 2)).await.0);
        }
        stats("a cell (x = i), for comparison", cell, &mut json);
        stats(
            "a completion (also on a subshell), for comparison",
            complete,
            &mut json,
        );
        stats("variables refresh after a cell, 100 variables", refresh, &mut json);

        let t = Instant::now();
        e.execute(
            "big = pd.DataFrame({'n': np.arange(10_000_000), 'g': np.arange(10_000_000) % 10,\n\
             \x20                   'v': np.where(np.arange(10_000_000) % 3 == 0, np.nan, np.random.rand(10_000_000))})",
            None,
        )
        .await
        .unwrap();
        println!(
            "making the 10,000,000-row frame took {:.1} s",
            t.elapsed().as_secs_f64()
        );

        let mut first = Vec::new();
        let mut later = Vec::new();
        for i in 0..n as u64 {
            first.push(time(e.frame_page(&query(0))).await.0);
            later.push(time(e.frame_page(&query(5_000_000 + i * 100))).await.0);
        }
        stats("grid page of 10,000,000 rows: first page", first, &mut json);
        stats("grid page of 10,000,000 rows: a page deep in", later, &mut json);

        let mut nulls = query(0);
        nulls.nulls = true;
        let (cold, page) = time(e.frame_page(&nulls)).await;
        assert_eq!(page.unwrap().columns[2].nulls, Some(3_333_334));
        stats("grid: null counts, first time", vec![cold], &mut json);
        let mut counted = Vec::new();
        for _ in 0..n {
            counted.push(time(e.frame_page(&nulls)).await.0);
        }
        stats("grid: null counts, counted before", counted, &mut json);

        let mut sorted = query(0);
        sorted.sort = vec![SortKey {
            column: 2,
            ascending: false,
        }];
        let (sort_ms, _) = time(e.frame_page(&sorted)).await;
        stats("grid: a new sort of 10,000,000 floats", vec![sort_ms], &mut json);
        let mut pages = Vec::new();
        for i in 0..n as u64 {
            sorted.offset = i * 100;
            pages.push(time(e.frame_page(&sorted)).await.0);
        }
        stats("grid: a page of the sorted view", pages, &mut json);

        let mut filtered = query(0);
        filtered.filters = vec![Filter {
            column: 1,
            op: FilterOp::Eq,
            value: "3".into(),
        }];
        let (filter_ms, page) = time(e.frame_page(&filtered)).await;
        assert_eq!(page.unwrap().rows, 1_000_000);
        stats("grid: a new filter (g == 3) of 10,000,000 rows", vec![filter_ms], &mut json);

        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(
            out.join("variables.json"),
            format!("{{\n{}\n}}\n", json.join(",\n")),
        )
        .unwrap();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("load average at end: {}", load.trim());
        e.stop().await.unwrap();
    });
}

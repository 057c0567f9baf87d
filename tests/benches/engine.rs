//! Engine benchmark: cold start, warm execution, large output, reset, memory.
//!
//! `cargo bench -p ipybox-tests --bench engine [-- --quick]`. Prints median/min/max per
//! figure and writes JSON to `target/bench/engine.json`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use ipybox_tests::{builder, rss_kib, workspace};

fn stats(name: &str, unit: &str, mut xs: Vec<f64>, json: &mut Vec<String>) {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = if xs.len() % 2 == 1 {
        xs[xs.len() / 2]
    } else {
        (xs[xs.len() / 2 - 1] + xs[xs.len() / 2]) / 2.0
    };
    let (min, max) = (xs[0], xs[xs.len() - 1]);
    println!(
        "{name:<48} {unit:>4}  median {median:>10.3}  min {min:>10.3}  max {max:>10.3}  n {}",
        xs.len()
    );
    json.push(format!(
        "  \"{name}\": {{\"unit\": \"{unit}\", \"median\": {median}, \"min\": {min}, \"max\": {max}, \"n\": {}}}",
        xs.len()
    ));
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let mut json = Vec::new();
        let ws = workspace();
        // Make sure the environment exists before timing anything.
        let _ = ipybox_tests::python();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        println!("load average at start: {}", load.trim());

        // Cold start: start() + execute("1+1").
        let mut cold = Vec::new();
        let mut stops = Vec::new();
        for _ in 0..if quick { 3 } else { 10 } {
            let t = Instant::now();
            let e = builder(ws.path()).build();
            e.start().await.unwrap();
            let r = e.execute("1+1", None).await.unwrap();
            cold.push(t.elapsed().as_secs_f64());
            assert_eq!(
                r.text.as_deref(),
                Some("2"),
                "no output lost on a cold start"
            );
            let t = Instant::now();
            e.stop().await.unwrap();
            stops.push(t.elapsed().as_secs_f64());
        }
        stats("cold start to first result", "s", cold, &mut json);
        stats("stop()", "s", stops, &mut json);

        let e = builder(ws.path()).build();
        e.start().await.unwrap();
        // Let the spare kernel come up so it does not compete with the measurement.
        tokio::time::sleep(Duration::from_secs(2)).await;

        // Warm execute("x=1").
        let n = if quick { 200 } else { 1000 };
        for _ in 0..20 {
            e.execute("x=1", None).await.unwrap();
        }
        let mut warm = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            e.execute("x=1", None).await.unwrap();
            warm.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        stats("warm execute(\"x=1\")", "ms", warm, &mut json);
        let mut printed = Vec::new();
        for _ in 0..200 {
            let t = Instant::now();
            let r = e.execute("print('a')", None).await.unwrap();
            assert_eq!(r.text.as_deref(), Some("a"));
            printed.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        stats("warm execute(\"print('a')\")", "ms", printed, &mut json);
        let (rss, _) = rss_kib();
        println!(
            "{:<48} {:>4}  {:>10.1}",
            "RSS of this process after warm runs",
            "MiB",
            rss as f64 / 1024.0
        );
        json.push(format!("  \"rss_warm_mib\": {}", rss as f64 / 1024.0));

        // 100,000 printed lines.
        let mut lines = Vec::new();
        for _ in 0..if quick { 3 } else { 5 } {
            let t = Instant::now();
            let r = e
                .execute("for i in range(100000): print(i)", None)
                .await
                .unwrap();
            lines.push(t.elapsed().as_secs_f64());
            assert_eq!(r.text.unwrap().lines().count(), 100_000, "all lines arrive");
        }
        stats("100,000 printed lines", "s", lines, &mut json);
        let (rss, hwm) = rss_kib();
        println!(
            "{:<48} {:>4}  {:>10.1} (peak {:.1})",
            "RSS of this process after large output",
            "MiB",
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0
        );
        json.push(format!(
            "  \"rss_after_output_mib\": {}, \"rss_peak_mib\": {}",
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0
        ));

        // reset(), with the spare kernel ready (as between cells).
        let mut resets = Vec::new();
        let mut reset_exec = Vec::new();
        for _ in 0..if quick { 3 } else { 10 } {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let t = Instant::now();
            e.reset().await.unwrap();
            resets.push(t.elapsed().as_secs_f64());
            e.execute("1+1", None).await.unwrap();
            reset_exec.push(t.elapsed().as_secs_f64());
        }
        stats("reset()", "s", resets, &mut json);
        stats("reset() + first execute", "s", reset_exec, &mut json);
        e.stop().await.unwrap();

        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
        let _ = std::fs::create_dir_all(&out);
        let body = format!(
            "{{\n  \"loadavg\": \"{}\",\n{}\n}}\n",
            load.trim(),
            json.join(",\n")
        );
        let _ = std::fs::write(out.join("engine.json"), body);
    });
}

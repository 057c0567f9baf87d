//! Quick check of the large-output path alone: `cargo bench -p ipybox-tests --bench lines`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::Instant;

fn main() {
    let rt = ipybox_tests::runtime();
    rt.block_on(async {
        let ws = ipybox_tests::workspace();
        let e = ipybox_tests::builder(ws.path()).spare_kernel(false).build();
        e.start().await.unwrap();
        for _ in 0..3 {
            let t = Instant::now();
            let r = e.execute("for i in range(100000): print(i)", None).await.unwrap();
            let total = t.elapsed().as_secs_f64();
            let r2 = e.execute("import time\nt=time.perf_counter()\nfor i in range(100000): print(i)\nd=time.perf_counter()-t\n", None).await.unwrap();
            let d = e.execute("print(round(d, 3))", None).await.unwrap();
            println!("100k lines: {total:.3} s end to end, loop in kernel {} s ({} / {} lines)", d.text.unwrap(), r.text.unwrap().lines().count(), r2.text.unwrap().lines().count());
        }
        let code = std::fs::read_to_string("/tmp/prof.py").unwrap_or_default();
        if !code.is_empty() {
            e.execute(&code, None).await.unwrap();
            println!("{}", e.execute("print(PROFILE)", None).await.unwrap().text.unwrap());
            println!("{}", e.execute("import sys; print(type(sys.stdout), type(sys.stdout).write, sys.stdout.__dict__.get('write'))", None).await.unwrap().text.unwrap());
        }
        e.stop().await.unwrap();
    });
}

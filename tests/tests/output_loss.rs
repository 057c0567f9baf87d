//! The Python ipybox loses the output of 12–24 % of quick executions (it stops at
//! `execute_reply`). ipybox waits for both the reply and `status: idle`.

#![allow(clippy::unwrap_used)]

use ipybox_tests::{builder, workspace};

#[tokio::test]
async fn ten_thousand_quick_executions_lose_no_output() {
    let ws = workspace();
    let e = builder(ws.path()).spare_kernel(false).build();
    e.start().await.unwrap();
    let mut lost = Vec::new();
    for i in 0..10_000u32 {
        let (code, expected) = if i % 2 == 0 {
            (format!("print({i})"), i.to_string())
        } else {
            (format!("{i}+1"), (i + 1).to_string())
        };
        let r = e.execute(&code, None).await.unwrap();
        if r.text.as_deref() != Some(expected.as_str()) {
            lost.push((i, r.text));
        }
    }
    assert!(
        lost.is_empty(),
        "{} executions lost or mixed output, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    e.stop().await.unwrap();
}

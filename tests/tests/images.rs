//! Images a cell displays are validated and saved with unique names.

#![allow(clippy::unwrap_used)]

use ipybox_tests::{builder, started, workspace};

#[tokio::test]
async fn a_matplotlib_plot_yields_exactly_one_valid_png() {
    let ws = workspace();
    let e = started(ws.path()).await;
    let r = e
        .execute("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title('t')\nplt.show()", None)
        .await
        .unwrap();
    assert_eq!(r.images.len(), 1, "one plot, one image: {r:?}");
    let path = &r.images[0];
    assert!(
        path.starts_with(std::fs::canonicalize(ws.path()).unwrap().join("images")),
        "default images/ in the working dir: {path:?}"
    );
    assert_eq!(path.extension().unwrap(), "png");
    let img = image::open(path).expect("the PNG decodes");
    assert!(
        img.width() > 100 && img.height() > 100,
        "a real plot, {}x{}",
        img.width(),
        img.height()
    );
    let r2 = e.execute("plt.plot([1]); plt.show()", None).await.unwrap();
    assert_ne!(r2.images[0], r.images[0], "names are unique");
    e.stop().await.unwrap();
}

#[tokio::test]
async fn jpeg_and_svg_are_saved_and_a_broken_png_is_reported() {
    let ws = workspace();
    let images = ws.path().join("out/pics");
    let e = builder(ws.path()).images_dir(&images).build();
    e.start().await.unwrap();
    let code = r#"
import io
from IPython.display import display, SVG, Image
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
fig = plt.figure(); plt.plot([1, 2])
buf = io.BytesIO(); fig.savefig(buf, format="jpg"); plt.close(fig)
display(Image(data=buf.getvalue(), format="jpeg"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'))
display({"image/png": "bm90IGEgcG5n", "text/plain": "broken"}, raw=True)
"#;
    let r = e.execute(code, None).await.unwrap();
    let exts: Vec<_> = r
        .images
        .iter()
        .map(|p| p.extension().unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        exts,
        ["jpg", "svg"],
        "JPEG and SVG saved, the broken PNG not: {r:?}"
    );
    assert!(
        r.images.iter().all(|p| p.starts_with(&images)),
        "custom images_dir is used"
    );
    image::open(&r.images[0]).expect("the JPEG decodes");
    assert!(
        std::fs::read_to_string(&r.images[1])
            .unwrap()
            .contains("<svg")
    );
    let text = r.text.unwrap();
    assert!(
        text.contains("image/png output not saved"),
        "the broken image is reported: {text}"
    );
    assert_eq!(
        std::fs::read_dir(&images).unwrap().count(),
        2,
        "nothing else was written"
    );
    e.stop().await.unwrap();
}

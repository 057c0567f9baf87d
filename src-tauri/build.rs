fn main() {
    // The desktop app's context (window config, capabilities, the UI built into `ui-dist`) is
    // generated at compile time; the headless build needs none of it.
    #[cfg(feature = "desktop")]
    tauri_build::build();
    // Otherwise cargo would run this again, and rebuild the crate, whenever any file of the
    // package changes, such as the UI build writing `ui-dist`.
    #[cfg(not(feature = "desktop"))]
    println!("cargo:rerun-if-changed=build.rs");
}

fn main() {
    // The desktop app's context (window config, capabilities, the UI built into `ui-dist`) is
    // generated at compile time; the headless build needs none of it.
    #[cfg(feature = "desktop")]
    tauri_build::build();
}

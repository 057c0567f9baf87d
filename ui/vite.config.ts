import { defineConfig } from 'vite';

// The app is loaded by Tauri from its bundled assets, so every URL is relative. The build
// goes into the Rust crate (src-tauri/ui-dist), which embeds it, so that the published crate
// holds everything it is built from.
export default defineConfig({
  base: './',
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: {
    outDir: '../src-tauri/ui-dist',
    target: 'es2021',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
    // Non-ASCII characters escaped: a script with even one character past Latin-1 is held
    // by WebKit as UTF-16, twice its size, for as long as the page lives.
    rolldownOptions: { output: { charset: 'ascii' } },
  },
});

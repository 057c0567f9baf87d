import { defineConfig } from 'vite';

// The app is loaded by Tauri from its bundled assets, so every URL is relative.
export default defineConfig({
  base: './',
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: {
    outDir: 'dist',
    target: 'es2021',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
  },
});

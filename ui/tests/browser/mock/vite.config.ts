import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Builds the fake backend into one classic script for page.addInitScript.
export default defineConfig({
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../.build', import.meta.url)),
    emptyOutDir: true,
    target: 'es2021',
    minify: false,
    lib: {
      entry: fileURLToPath(new URL('./tauri-mock.ts', import.meta.url)),
      formats: ['iife'],
      name: 'IpyboxMock',
      fileName: () => 'mock.js',
    },
  },
});

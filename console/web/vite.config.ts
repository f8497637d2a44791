import { defineConfig } from "vite";

// The console is served by cairn under /console/ from the embedded build in
// ../dist/app. No inline script or style may appear in the output: the
// server's Content-Security-Policy allows only same-origin files.
export default defineConfig({
  base: "/console/",
  build: {
    outDir: "../dist/app",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
    chunkSizeWarningLimit: 1024,
  },
});

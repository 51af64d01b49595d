import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// The build is embedded in the Go binary and committed; CI rebuilds it and
// diffs it, so its output must not depend on the machine: fixed file names
// (no content hashes that differ by path), no source maps with absolute
// paths, one bundle.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      output: {
        entryFileNames: "assets/console.js",
        chunkFileNames: "assets/[name].js",
        assetFileNames: "assets/[name][extname]",
      },
    },
  },
  test: {
    environment: "node",
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
  },
});

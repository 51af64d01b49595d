package cli

// rootExample is the root's example: the first steps.
const rootExample = `  mcpflow serve &
  mcpflow workflow new --from-capability demo.default.counter
  mcpflow run counter_workflow.default --follow`

import { RUNS_TRACK } from './invoked-command.js';
import { returnDuckdbMemoryPromptly } from './tracking-memory.js';

// Imported first by main.ts: DuckDB's allocator takes its settings when DuckDB's library loads, which
// the command modules' imports do before any command runs.
if (RUNS_TRACK) returnDuckdbMemoryPromptly();

import { returnDuckdbMemoryPromptly } from '../../src/cli/tracking-memory.js';

// Imported first by tracking-run.ts, so that the pipeline it runs in-process has `track`'s allocator settings.
returnDuckdbMemoryPromptly();

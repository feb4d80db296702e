import { basename } from 'node:path';
import { isAbsolutePath } from '../../../shared/settings.ts';
import { findTool } from '../../../shared/catalogue/index.ts';
import { APP_VERSION } from '../app-version.ts';

/**
 * How a result was made, as its XMP (namespace `mediadesk`) and its sidecar record it: a tool's
 * job, a workflow app's run, or a creation downloaded from the service's recent creations.
 */
export interface Provenance {
  origin: 'tool' | 'app' | 'creation';
  /** The catalogue's tool id and title; an app's id and name; a creation's tool as the service names it. */
  tool: string;
  toolTitle: string;
  /** The endpoint path the job or run was sent to; null for a creation (the service does not say). */
  modelPath: string | null;
  /** A tool's parameters or an app's inputs, local files by their name alone; none for a creation. */
  parameters: Record<string, unknown>;
  /** The task id, the app's run id, or the creation's id. */
  taskId: string | null;
  /** When the result was saved (ISO 8601); for a creation, when the service made it. */
  madeAt: string;
  appVersion: string;
  /** The input's file name (not its folder: the result may be shared). */
  source: string | null;
}

/** Parameters as recorded: a local file named by its name alone, not the folders it sits in. */
export function recordedParameters(params: Record<string, unknown>): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    return typeof v === 'string' && isAbsolutePath(v) ? basename(v) : v;
  };
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, strip(v)]));
}

export function provenanceOf(job: {
  tool: string;
  toolTitle: string;
  modelPath: string;
  params: Record<string, unknown>;
  taskId: string | null;
  inputPath: string | null;
}): Provenance {
  return {
    origin: 'tool',
    tool: job.tool,
    toolTitle: job.toolTitle,
    modelPath: job.modelPath,
    parameters: recordedParameters(job.params),
    taskId: job.taskId,
    madeAt: new Date().toISOString(),
    appVersion: APP_VERSION,
    source: job.inputPath && basename(job.inputPath),
  };
}

const INLINE_IMAGE = 'an image sent inline';

/**
 * A workflow app run's provenance: its inputs as recorded, a local image (`sources`, by input id)
 * named by its file name and an image sent inline (a data URI) said in words, never its bytes.
 */
export function appRunProvenance(run: {
  appId: string;
  appName: string;
  inputs: Record<string, unknown>;
  sources: Record<string, string>;
  runId: string | null;
  /** The path the run was sent to (flows or apps, whichever the backend answers with). */
  runPath: string;
}): Provenance {
  const inputs = Object.entries(run.inputs).map(([k, v]) => {
    if (run.sources[k]) return [k, basename(run.sources[k])];
    return [k, typeof v === 'string' && v.startsWith('data:') ? INLINE_IMAGE : v];
  });
  const first = Object.values(run.sources)[0];
  return {
    origin: 'app',
    tool: run.appId,
    toolTitle: run.appName,
    modelPath: run.runPath,
    parameters: recordedParameters(Object.fromEntries(inputs)),
    taskId: run.runId,
    madeAt: new Date().toISOString(),
    appVersion: APP_VERSION,
    source: first ? basename(first) : null,
  };
}

/** A recent creation's provenance: what the service's listing says of it (its tool, id and date). */
export function creationProvenance(c: { id: string; toolName: string | null; createdAt: string | null }): Provenance {
  const made = c.createdAt ? new Date(c.createdAt) : null;
  return {
    origin: 'creation',
    tool: c.toolName ?? '',
    toolTitle: (c.toolName && findTool(c.toolName)?.title) || (c.toolName ?? ''),
    modelPath: null,
    parameters: {},
    taskId: c.id,
    madeAt: (made && !Number.isNaN(made.getTime()) ? made : new Date()).toISOString(),
    appVersion: APP_VERSION,
    source: null,
  };
}

import type { JsonSchema } from '../../shared/official/index.ts';

/** The answers the reference gives for a status, read by the conformance tests through the app's parsers. */
export type Answer = { schema?: JsonSchema; example?: unknown; examples?: Record<string, unknown> };

/** Every example an answer gives (its named ones, else its one), then a sample built from its schema. */
export function answersOf(r: Answer): [string, unknown][] {
  const one: [string, unknown][] = r.example === undefined ? [] : [['example', r.example]];
  return [
    ...(r.examples ? Object.entries(r.examples) : one),
    ...(r.schema && Object.keys(r.schema).length ? [['schema sample', sampleFrom(r.schema)] as [string, unknown]] : []),
  ];
}

/** A value with every property the schema names, each with a value of its type (its first enum value, a URI for a uri). */
export function sampleFrom(schema: JsonSchema, name = ''): unknown {
  const branch = ((schema.allOf as JsonSchema[] | undefined) ?? []).length
    ? Object.assign({}, ...(schema.allOf as JsonSchema[]).map((p) => sampleFrom(p, name) as object))
    : undefined;
  if (branch) return branch;
  const alt = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (alt) return sampleFrom(alt.find((b) => b.type !== 'null') ?? alt[0], name);
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null);
  const type = [schema.type].flat().find((t) => t !== 'null');
  if (type === 'object' || schema.properties)
    return Object.fromEntries(
      Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([k, v]) => [k, sampleFrom(v, k)]),
    );
  if (type === 'array') return [sampleFrom((schema.items ?? {}) as JsonSchema, name)];
  if (type === 'integer' || type === 'number') return (schema.minimum as number | undefined) ?? 7;
  if (type === 'boolean') return false;
  if (schema.format === 'uri') return `https://example.com/${name || 'file'}.png`;
  if (schema.format === 'uuid') return '0b5a4d5e-7c1f-4a8e-9c55-2f0d8f0b7a11';
  if (schema.format === 'date-time') return '2026-06-29T10:00:00Z';
  if (name.includes('email')) return 'someone@example.com';
  return `${name || 'text'} value`;
}

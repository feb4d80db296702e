import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import svelteConfig from './svelte.config.js';

// The contract's modules that import no zod (each re-exported by the module of its area).
const ZOD_FREE_CONTRACT = [
  'errors.ts',
  'job-states.ts',
  'backend-identity.ts',
  'hot-folder-settle.ts',
  'lora-kinds.ts',
  'audit-words.ts',
  'report-words.ts',
];

export default tseslint.config(
  {
    ignores: [
      '.tmp/**',
      'out/**',
      'node_modules/**',
      'test-results/**',
      'playwright-report/**',
      'bench/.data/**',
      '.svelte-check/**',
    ],
  },
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-nested-ternary': 'error',
      // Small pieces: a file past 500 lines says at its top why it must stay whole (an eslint-disable with the reason).
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['warn', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // `<script lang="ts">` goes through the TypeScript parser; svelte.config.js supplies the preprocessing.
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: {
      parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'], svelteConfig },
    },
    rules: {
      // Svelte 5 drops whitespace at the start and end of an element or block: `{' · '}` is how it is kept.
      'svelte/no-useless-mustaches': 'off',
    },
  },
  {
    // The engine is plain Node: the web host and CLI run it with no Electron at all.
    files: ['electron/core/**/*.ts', 'electron/host/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'electron',
              message:
                'electron/core, sandbox and host must stay free of Electron; put Electron code in electron/main.',
            },
          ],
        },
      ],
    },
  },
  {
    // The Sandbox checks the app, so it shares none of its code: only shared/ and the media probe.
    // electron/media/ is plain Node under both core and Sandbox: it imports neither.
    files: ['electron/sandbox/**/*.ts', 'electron/media/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the Sandbox and the media probe must stay free of Electron.' }],
          patterns: [
            {
              group: ['**/core/*', '**/core/**', '**/host/**', '**/main/**'],
              message:
                'the Sandbox may not import the core (or a host); shared code goes in shared/ or electron/media/.',
            },
          ],
        },
      ],
    },
  },
  {
    // shared/ is imported by the renderer too: no Node built-ins.
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'electron'],
              message: 'shared/ runs in the renderer as well; keep it free of Node and Electron.',
            },
          ],
        },
      ],
    },
  },
  {
    // A page load would build every command's schemas (~70 ms of the renderer's main thread) for the
    // few constants and sentences the screens use: those come from the contract's modules without zod.
    files: ['renderer/**/*.ts', 'renderer/**/*.svelte'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/shared/contract/*', ...ZOD_FREE_CONTRACT.map((file) => `!**/shared/contract/${file}`)],
              allowTypeImports: true,
              message: `the renderer takes only types from the contract's schema modules; values come from ${ZOD_FREE_CONTRACT.join(', ')}.`,
            },
          ],
        },
      ],
    },
  },
  {
    // What the renderer takes them for: they stay free of zod and of the modules that build schemas.
    files: ZOD_FREE_CONTRACT.map((file) => `shared/contract/${file}`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'zod', message: 'this module is one the renderer loads without zod (ZOD_FREE_CONTRACT).' }],
          patterns: [
            {
              group: ['./*', ...ZOD_FREE_CONTRACT.map((file) => `!./${file}`)],
              allowTypeImports: true,
              message: `only types from the contract's schema modules here; values from ${ZOD_FREE_CONTRACT.join(', ')}.`,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    // A spec file is one feature's scenarios, and a test one story: their length is not a design smell.
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
);

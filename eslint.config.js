import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      '.tmp/**',
      'out/**',
      'node_modules/**',
      'test-results/**',
      'playwright-report/**',
      'bench/.data/**',
      '**/*.svelte',
    ],
  },
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The engine is plain Node: the web host and CLI run it with no Electron at all.
    files: ['electron/core/**/*.ts', 'electron/sandbox/**/*.ts', 'electron/host/**/*.ts'],
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
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);

// ESLint: the type-aware rules of typescript-eslint over the sources, benchmarks, codegen scripts and tests.
// Formatting is Prettier's job; `npm run lint` runs both and the dependency rules (.dependency-cruiser.cjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['generated/**', 'node_modules/**', '.devnet/**', 'contracts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a parameter or binding that an interface makes us take but we don't use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Handlers satisfy a promise-returning interface whether or not they wait on anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Migrations are written against `Kysely<any>`, as kysely advises: they must not depend on today's table types.
    files: ['src/store/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read JSON answers whose shapes they assert; `any` there is checked by the assertions themselves.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (config files, the explorer page's script, the PGlite worker) has no types to check: it is
    // parsed without the TypeScript project, and only the untyped rules apply.
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        console: 'readonly',
        process: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        module: 'writable',
        require: 'readonly',
      },
    },
  },
  {
    // The explorer's script runs in the browser (served by src/server/explorer.ts), not in Node.
    files: ['src/server/explorer/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        ['document', 'window', 'location', 'history', 'fetch', 'URLSearchParams', 'WebSocket', 'Node'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
);

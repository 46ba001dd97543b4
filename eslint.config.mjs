// ESLint (flat config): a small set of rules that each catch a real defect. No style rules: Prettier
// formats. Run by `npm run lint` and by `npm test` (so by CI); a finding fails the run.
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const defects = {
  // A case that runs into the next one without saying so.
  'no-fallthrough': 'error',
  // `==` converts types; `== null` (null or undefined) stays allowed, it is the one idiom.
  eqeqeq: ['error', 'always', { null: 'ignore' }],
  'no-unreachable': 'error',
  'no-dupe-keys': 'error',
  'no-duplicate-case': 'error',
  'no-dupe-else-if': 'error',
  'no-self-assign': 'error',
  'no-self-compare': 'error',
  'no-cond-assign': 'error',
  'no-constant-binary-expression': 'error',
  'no-unsafe-finally': 'error',
  'no-unsafe-negation': 'error',
  'no-async-promise-executor': 'error',
  'no-compare-neg-zero': 'error',
  'no-loss-of-precision': 'error',
  'use-isnan': 'error',
  'valid-typeof': 'error',
  'no-unused-private-class-members': 'error',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '**/.next/',
      '.data/',
      'sdk/dist/',
      'cli/dist/',
      'db/migrations/',
      'test-results/',
      'playwright-report/',
      'coverage/',
      'next-env.d.ts',
    ],
  },
  {
    files: ['**/*.{ts,tsx,mts,js,mjs,cjs}'],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    languageOptions: { parser: tseslint.parser, ecmaVersion: 'latest', sourceType: 'module' },
    rules: {
      ...defects,
      // Unused code is usually a forgotten call or a stale import; a leading `_` marks it intended.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Hooks called conditionally or with stale dependencies: wrong renders that no type shows.
    files: ['components/**/*.tsx', 'app/**/*.tsx', 'lib/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // Rules that need the type checker: TypeScript files only (the project service reads tsconfig.json).
    files: ['**/*.{ts,tsx,mts}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled error, or work cut short).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
);

import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './columns';
import { organizations } from './orgs';
import { prompts } from './prompts';

// One dataset per prompt; every write is compare-and-swap on revision.
export const datasets = pgTable(
  'datasets',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    promptId: text()
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    revision: integer().notNull().default(0),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('datasets_prompt_idx').on(t.promptId)],
);

export const datasetCases = pgTable(
  'dataset_cases',
  {
    id: text().primaryKey(),
    organizationId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    datasetId: text()
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    position: integer().notNull(),
    input: text().notNull(),
    expectedOutput: text().notNull(),
    inputFormat: text({ enum: ['text', 'json'] })
      .notNull()
      .default('text'),
    referenceFormat: text({ enum: ['text', 'json'] })
      .notNull()
      .default('text'),
    createdAt: createdAt(),
    // A case made from a production span (M11 "from a span to a case"): where it came from.
    sourceTraceId: text(),
    sourceSpanId: text(),
  },
  (t) => [index('dataset_cases_dataset_idx').on(t.datasetId, t.position)],
);

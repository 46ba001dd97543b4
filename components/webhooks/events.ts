import { webhookEventTypes } from '@/server/webhooks/schemas';

// What each subscribable event means, in one line, for the endpoint form and the list.
export const eventDescriptions: Record<(typeof webhookEventTypes)[number], string> = {
  'prompt.version.created': 'A version was saved from the draft (or published by a baseline).',
  'prompt.label.moved': 'A label moved: a promotion, a rollback, a traffic split or an override.',
  'evaluation.completed': 'An evaluation ran every case (results may still wait for review: see pendingReviewCases).',
  'evaluation.failed': 'An evaluation stopped with an error.',
  'warning.opened': 'A new warning opened (credits running out, a failing webhook, a paused online evaluation…).',
};

export const eventOptions = webhookEventTypes.map((type) => ({ type, description: eventDescriptions[type] }));

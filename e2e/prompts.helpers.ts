import type { Page } from '@playwright/test';
import { expect } from './fixtures';

// Creates a prompt through the dialog and lands on its editor; returns the editor URL.
export async function createPrompt(page: Page, organizationId: string, name: string): Promise<string> {
  await page.goto(`/organizations/${organizationId}/prompts`);
  await page.getByRole('button', { name: 'New prompt' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create prompt' });
  await dialog.getByLabel('Prompt name').fill(name);
  await dialog.getByRole('button', { name: 'Create prompt' }).click();
  await expect(page).toHaveURL(new RegExp(`/organizations/${organizationId}/prompts/[^/]+$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name);
  return new URL(page.url()).pathname;
}

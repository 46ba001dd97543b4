import { describe, expect, it } from 'vitest';
import { waitText } from '@/server/credentials/attempts';

describe('waitText', () => {
  it('says the wait Retry-After gives in the largest whole unit, rounded up', () => {
    expect(waitText(0)).toBe('in 1 second');
    expect(waitText(1)).toBe('in 1 second');
    expect(waitText(59.2)).toBe('in 60 seconds');
    expect(waitText(60)).toBe('in 1 minute');
    expect(waitText(61)).toBe('in 2 minutes');
    expect(waitText(2280)).toBe('in 38 minutes');
    expect(waitText(3600)).toBe('in 1 hour');
    expect(waitText(7201)).toBe('in 3 hours');
  });
});

'use client';

import { createContext, useContext, type ReactNode } from 'react';

// Whether this server can sell Pro at all (a Stripe key and the Pro price are configured). Without
// them plans never change, so the dashboard does not point people at an upgrade they cannot buy.
const CheckoutAvailable = createContext(true);

export function CheckoutAvailability({ available, children }: { available: boolean; children: ReactNode }) {
  return <CheckoutAvailable.Provider value={available}>{children}</CheckoutAvailable.Provider>;
}

export function useCheckoutAvailable(): boolean {
  return useContext(CheckoutAvailable);
}

import { z } from 'zod';

// The page's CSP forbids eval, so zod's compiled parsers can never run here; jitless also skips the
// `new Function` probe whose refusal the CSP reports as a violation as the app starts.
z.config({ jitless: true });

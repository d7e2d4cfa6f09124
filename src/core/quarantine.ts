/** Quarantine's limits, shared by the API (src/api/routes/quarantine.ts), the CLI and the dashboard (plain values: the browser bundle imports this). */

/** How long a quarantine lasts when no end is given, and the longest one accepted, in days. */
export const QUARANTINE_DAYS = Object.freeze({ default: 14, max: 365 });

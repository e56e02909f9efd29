/**
 * `punches battery CARD…`: battery dates of SIAC cards from the ordering service
 * (`GET /api/rest/v1/products/si-cards/{cardNumber}`, ordering spec `getSiCardBattery`).
 */

/** Body of a 200 (ordering `SiCardBatteryResponse`; dates `YYYY-MM-DD`, null when unknown). */
interface BatteryInfo {
  cardNumber: string;
  batteryDate: string | null;
  replaceBefore: string | null;
}

/** One line per card: number, battery date, replace-before, or the error status/detail. */
export async function batteryLines(baseUrl: string, cards: readonly string[], clientId = 'sports-timing-cli'): Promise<{ lines: string[]; failed: number }> {
  const lines: string[] = [];
  let failed = 0;
  for (const card of cards) {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/rest/v1/products/si-cards/${encodeURIComponent(card)}`, {
      headers: { Accept: 'application/json', 'X-Service-Client-Id': clientId },
    });
    if (res.ok) {
      const b = (await res.json()) as BatteryInfo;
      lines.push(`${b.cardNumber}\tbattery ${b.batteryDate ?? 'unknown'}\treplace before ${b.replaceBefore ?? 'unknown'}`);
    } else {
      failed += 1;
      // The API's own reason: the field messages of a validation problem, else its detail, else its title.
      const problem = (await res.json().catch(() => ({}))) as { title?: string; detail?: string; errors?: Record<string, string[]> };
      const reasons = Object.values(problem.errors ?? {}).flat();
      lines.push(`${card}\terror ${res.status}: ${reasons.length > 0 ? reasons.join('; ') : (problem.detail ?? problem.title ?? res.statusText)}`);
    }
  }
  return { lines, failed };
}

/**
 * Built-in labels of the known configuration attributes and their option values in English, German and
 * French: used when no localized product options were imported for the requested culture (spec
 * `ConfigurableAttribute`, card-reservation `get-card-configuration`).
 */

/** Label of an attribute and of its option values, by culture. */
interface BuiltInLabels {
  label: Record<string, string>;
  options?: Record<string, Record<string, string>>;
}

/** Cultures of the built-in labels. */
export const BUILT_IN_LABEL_CULTURES = ['en', 'de', 'fr'] as const;

/** Attribute key → labels. */
export const BUILT_IN_LABELS: Readonly<Record<string, BuiltInLabels>> = {
  cardNumber: { label: { en: 'Card number', de: 'Kartennummer', fr: 'Numéro de carte' } },
  feedbackSignal: {
    label: { en: 'Feedback signal', de: 'Quittierungssignal', fr: 'Signal de confirmation' },
    options: {
      beepAndFlash: { en: 'Beep and flash', de: 'Ton und Blinken', fr: 'Bip et clignotement' },
      flashOnly: { en: 'Flash only', de: 'Nur Blinken', fr: 'Clignotement seul' },
      beepOnly: { en: 'Beep only', de: 'Nur Ton', fr: 'Bip seul' },
      silent: { en: 'Silent', de: 'Stumm', fr: 'Silencieux' },
    },
  },
  personalDataFirstName: {
    label: { en: 'First name (stored on the card)', de: 'Vorname (auf der Karte gespeichert)', fr: 'Prénom (enregistré sur la carte)' },
  },
  personalDataLastName: { label: { en: 'Last name (stored on the card)', de: 'Nachname (auf der Karte gespeichert)', fr: 'Nom (enregistré sur la carte)' } },
};

# digestd's words in German (Sie-Form). Keys and variables as in the English catalogue.

weekday-short = { $day ->
    [mon] Mo.
    [tue] Di.
    [wed] Mi.
    [thu] Do.
    [fri] Fr.
    [sat] Sa.
   *[sun] So.
}
weekday-long = { $day ->
    [mon] Montag
    [tue] Dienstag
    [wed] Mittwoch
    [thu] Donnerstag
    [fri] Freitag
    [sat] Samstag
   *[sun] Sonntag
}
month-short = { $month ->
    [jan] Jan.
    [feb] Feb.
    [mar] März
    [apr] Apr.
    [may] Mai
    [jun] Juni
    [jul] Juli
    [aug] Aug.
    [sep] Sept.
    [oct] Okt.
    [nov] Nov.
   *[dec] Dez.
}
date-month-first = { $weekday }, { $month } { $day }.
date-day-first = { $weekday }, { $day }. { $month }
someone = Jemand
people-two = { $first } und { $second }
people-more = { $first }, { $second } und { $rest ->
    [one] eine weitere Person
   *[other] { $rest } weitere
}
attribute-start = Startzeit
attribute-reminder = Erinnerung
attribute-rrule = Wiederholung
attribute-kind = Typ
attribute-body = Text
line-created = { $who } hat { $title } angelegt ({ $kind })
line-created-starting = { $who } hat { $title } angelegt ({ $kind }), Beginn { $when }
line-deleted = { $who } hat { $title } gelöscht ({ $kind })
line-added = { $who } hat { $title } zu { $collection } hinzugefügt
line-removed = { $who } hat { $title } aus { $collection } entfernt
line-now = { $who } hat { $title } als aktuell markiert
line-edited = { $who } hat { $title } geändert – { $attribute } { $change }{ $also }
line-edited-bare = { $who } hat { $title } geändert
line-edited-also = , { $attribute } { $change }
line-edited-more = { "" } und { $count ->
    [one] eine weitere Änderung
   *[other] { $count } weitere Änderungen
}
line-earlier = Nachgetragen vom { $when }: { $line }
line-upcoming = { $when }: { $title }
line-upcoming-notes = { $when }: { $title } ({ $notes })
note-reminder = Erinnerung
note-repeats = wiederkehrend
note-reminder-repeats = Erinnerung, wiederkehrend
change-from-to = von { $from } auf { $to }
change-same-day = von { $from } auf { $to } { $zone } am { $date }
change-to = auf { $to }
change-from-to-nothing = von { $from } auf leer
change-to-nothing = auf leer
quoted = „{ $value }“
subject-hourly-digest = Stündliche Übersicht: { $collection }
subject-daily-digest = Tägliche Übersicht: { $collection }
subject-weekly-digest = Wöchentliche Übersicht: { $collection }
subject-hourly-agenda = Stündliche Vorschau: { $collection }
subject-daily-agenda = Tägliche Vorschau: { $collection }
subject-weekly-agenda = Wöchentliche Vorschau: { $collection }
all-collections = alle Sammlungen
collections-yours = Ihren Sammlungen
collections-two = { $first } und { $second }
collections-many = { $count } Sammlungen
heading-no-changes = Keine Änderungen in { $collections } seit { $since }
heading-changes = { $count ->
    [one] { $count } Änderung
   *[other] { $count } Änderungen
} in { $collections } seit { $since }
heading-nothing-upcoming = Nichts geplant in { $collections } { $span }
heading-upcoming = { $count ->
    [one] { $count } Eintrag
   *[other] { $count } Einträge
} geplant in { $collections } { $span }
span-hourly = ab { $time } { $zone }
span-daily = am Tag ab { $date }, { $time } { $zone }
span-weekly = in der Woche ab { $date }
heading-seen = { $heading } ({ $seen })
seen-left-out = { $count ->
    [one] { $count } bereits gesehene Änderung ist ausgelassen
   *[other] { $count } bereits gesehene Änderungen sind ausgelassen
}
more = und { $count } weitere
full-digest = vollständige Übersicht ansehen
the-full-digest = die vollständige Übersicht
times-shown = Zeiten in { $zone }.
manage-subscriptions = Abonnements verwalten
unsubscribe-digest = Diese Übersicht abbestellen
open-full-digest = Vollständige Übersicht öffnen
manage-short = Verwalten
batch-subject = { $subject } (+{ $count } weitere)
notification-sent = Nachricht vom { $when } zu { $subject }
notification-batch-subject = { $subject } (und { $count } weitere)
signup-subject = Bitte bestätigen Sie Ihr Abonnement
signup-asked = Jemand – hoffentlich Sie – hat für diese Adresse Übersichten zu { $names } angefordert.
signup-open = Zum Bestätigen öffnen Sie diesen Link und klicken Sie auf „{ signup-confirm-button }“:
signup-button = Abonnement bestätigen
signup-copy = Oder kopieren Sie diese Adresse in Ihren Browser:
signup-until = Der Link gilt bis { $until } UTC. Falls Sie das nicht angefordert haben, ignorieren Sie diese Nachricht einfach: Sie erhalten dann nichts weiter.

# digestd's words in Spanish. Keys and variables as in the English catalogue.

weekday-short = { $day ->
    [mon] lun
    [tue] mar
    [wed] mié
    [thu] jue
    [fri] vie
    [sat] sáb
   *[sun] dom
}
weekday-long = { $day ->
    [mon] lunes
    [tue] martes
    [wed] miércoles
    [thu] jueves
    [fri] viernes
    [sat] sábado
   *[sun] domingo
}
month-short = { $month ->
    [jan] ene
    [feb] feb
    [mar] mar
    [apr] abr
    [may] may
    [jun] jun
    [jul] jul
    [aug] ago
    [sep] sept
    [oct] oct
    [nov] nov
   *[dec] dic
}
date-month-first = { $weekday }, { $month } { $day }
date-day-first = { $weekday }, { $day } { $month }
someone = Alguien
people-two = { $first } y { $second }
people-more = { $first }, { $second } y { $rest ->
    [one] { $rest } persona más
   *[other] { $rest } personas más
}
attribute-start = la hora de inicio
attribute-reminder = el recordatorio
attribute-rrule = la repetición
attribute-kind = el tipo
attribute-body = el texto
line-created = { $who } creó { $title } ({ $kind })
line-created-starting = { $who } creó { $title } ({ $kind }), que empieza el { $when }
line-deleted = { $who } eliminó { $title } ({ $kind })
line-added = { $who } añadió { $title } a { $collection }
line-removed = { $who } quitó { $title } de { $collection }
line-now = { $who } marcó { $title } como actual
line-edited = { $who } cambió { $attribute } de { $title } { $change }{ $also }
line-edited-bare = { $who } cambió { $title }
line-edited-also = , y { $attribute } { $change }
line-edited-more = , y { $count ->
    [one] { $count } cambio más
   *[other] { $count } cambios más
}
line-earlier = Registrado después, el { $when }: { $line }
line-upcoming = { $when }: { $title }
line-upcoming-notes = { $when }: { $title } ({ $notes })
note-reminder = recordatorio
note-repeats = se repite
note-reminder-repeats = recordatorio, se repite
change-from-to = de { $from } a { $to }
change-same-day = de { $from } a { $to } { $zone } el { $date }
change-to = a { $to }
change-from-to-nothing = de { $from } a vacío
change-to-nothing = a vacío
quoted = «{ $value }»
subject-hourly-digest = Resumen cada hora: { $collection }
subject-daily-digest = Resumen diario: { $collection }
subject-weekly-digest = Resumen semanal: { $collection }
subject-hourly-agenda = Agenda cada hora: { $collection }
subject-daily-agenda = Agenda diaria: { $collection }
subject-weekly-agenda = Agenda semanal: { $collection }
all-collections = todas las colecciones
collections-yours = tus colecciones
collections-two = { $first } y { $second }
collections-many = { $count } colecciones
heading-no-changes = Sin cambios en { $collections } desde { $since }
heading-changes = { $count ->
    [one] { $count } cambio
   *[other] { $count } cambios
} en { $collections } desde { $since }
heading-nothing-upcoming = Nada previsto en { $collections } { $span }
heading-upcoming = { $count ->
    [one] { $count } elemento previsto
   *[other] { $count } elementos previstos
} en { $collections } { $span }
span-hourly = desde las { $time } { $zone }
span-daily = el día desde el { $date }, { $time } { $zone }
span-weekly = la semana desde el { $date }
heading-seen = { $heading } ({ $seen })
seen-left-out = { $count ->
    [one] se omite { $count } cambio que ya viste
   *[other] se omiten { $count } cambios que ya viste
}
more = y { $count } más
full-digest = ver el resumen completo
the-full-digest = el resumen completo
times-shown = Las horas se muestran en { $zone }.
manage-subscriptions = Gestionar tus suscripciones
unsubscribe-digest = Cancelar la suscripción a este resumen
open-full-digest = Abrir el resumen completo
manage-short = Gestionar
batch-subject = { $subject } (+{ $count } más)
notification-sent = Mensaje enviado el { $when } sobre { $subject }
notification-batch-subject = { $subject } (y { $count } más)
signup-subject = Confirma tu suscripción a los resúmenes
signup-asked = Alguien, esperamos que tú, pidió resúmenes de { $names } en esta dirección.
signup-open = Para confirmar, abre este enlace y pulsa «{ signup-confirm-button }»:
signup-button = Confirmar mi suscripción
signup-copy = O copia esta dirección en tu navegador:
signup-until = El enlace funciona hasta el { $until } UTC. Si no lo pediste, ignora este mensaje: no se enviará nada más.

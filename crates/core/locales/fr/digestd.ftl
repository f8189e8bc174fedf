# digestd's words in French. Keys and variables as in the English catalogue.

weekday-short = { $day ->
    [mon] lun.
    [tue] mar.
    [wed] mer.
    [thu] jeu.
    [fri] ven.
    [sat] sam.
   *[sun] dim.
}
weekday-long = { $day ->
    [mon] lundi
    [tue] mardi
    [wed] mercredi
    [thu] jeudi
    [fri] vendredi
    [sat] samedi
   *[sun] dimanche
}
month-short = { $month ->
    [jan] janv.
    [feb] févr.
    [mar] mars
    [apr] avr.
    [may] mai
    [jun] juin
    [jul] juil.
    [aug] août
    [sep] sept.
    [oct] oct.
    [nov] nov.
   *[dec] déc.
}
date-month-first = { $weekday } { $month } { $day }
date-day-first = { $weekday } { $day } { $month }
someone = Quelqu’un
people-two = { $first } et { $second }
people-more = { $first }, { $second } et { $rest ->
    [one] { $rest } autre personne
   *[other] { $rest } autres personnes
}
attribute-start = l’heure de début
attribute-reminder = le rappel
attribute-rrule = la récurrence
attribute-kind = le type
attribute-body = le texte
line-created = { $who } a créé { $title } ({ $kind })
line-created-starting = { $who } a créé { $title } ({ $kind }), qui commence le { $when }
line-deleted = { $who } a supprimé { $title } ({ $kind })
line-added = { $who } a ajouté { $title } à { $collection }
line-removed = { $who } a retiré { $title } de { $collection }
line-now = { $who } a marqué { $title } comme en cours
line-edited = { $who } a modifié { $attribute } de { $title } { $change }{ $also }
line-edited-bare = { $who } a modifié { $title }
line-edited-also = , ainsi que { $attribute } { $change }
line-edited-more = , et { $count ->
    [one] { $count } autre modification
   *[other] { $count } autres modifications
}
line-earlier = Enregistré plus tard, le { $when } : { $line }
line-upcoming = { $when } : { $title }
line-upcoming-notes = { $when } : { $title } ({ $notes })
note-reminder = rappel
note-repeats = récurrent
note-reminder-repeats = rappel, récurrent
change-from-to = de { $from } à { $to }
change-same-day = de { $from } à { $to } { $zone } le { $date }
change-to = désormais { $to }
change-from-to-nothing = de { $from } à vide
change-to-nothing = désormais vide
quoted = « { $value } »
subject-hourly-digest = Résumé horaire : { $collection }
subject-daily-digest = Résumé quotidien : { $collection }
subject-weekly-digest = Résumé hebdomadaire : { $collection }
subject-hourly-agenda = Agenda horaire : { $collection }
subject-daily-agenda = Agenda du jour : { $collection }
subject-weekly-agenda = Agenda de la semaine : { $collection }
all-collections = toutes les collections
collections-yours = vos collections
collections-two = { $first } et { $second }
collections-many = { $count } collections
heading-no-changes = Aucune modification dans { $collections } depuis { $since }
heading-changes = { $count ->
    [one] { $count } modification
   *[other] { $count } modifications
} dans { $collections } depuis { $since }
heading-nothing-upcoming = Rien de prévu dans { $collections } { $span }
heading-upcoming = { $count ->
    [one] { $count } élément prévu
   *[other] { $count } éléments prévus
} dans { $collections } { $span }
span-hourly = à partir de { $time } { $zone }
span-daily = pour la journée du { $date }, à partir de { $time } { $zone }
span-weekly = pour la semaine du { $date }
heading-seen = { $heading } ({ $seen })
seen-left-out = { $count ->
    [one] { $count } modification déjà vue est omise
   *[other] { $count } modifications déjà vues sont omises
}
more = et { $count } de plus
full-digest = voir le résumé complet
the-full-digest = le résumé complet
times-shown = Heures indiquées en { $zone }.
manage-subscriptions = Gérer vos abonnements
unsubscribe-digest = Se désabonner de ce résumé
open-full-digest = Ouvrir le résumé complet
manage-short = Gérer
batch-subject = { $subject } (+{ $count } de plus)
notification-sent = Message envoyé le { $when } au sujet de { $subject }
notification-batch-subject = { $subject } (et { $count } de plus)
signup-subject = Confirmez votre abonnement aux résumés
signup-asked = Quelqu’un, sans doute vous, a demandé des résumés de { $names } à cette adresse.
signup-open = Pour confirmer, ouvrez ce lien et cliquez sur « { signup-confirm-button } » :
signup-button = Confirmer mon abonnement
signup-copy = Ou copiez cette adresse dans votre navigateur :
signup-until = Le lien est valable jusqu’au { $until } UTC. Si vous n’êtes pas à l’origine de cette demande, ignorez ce message : vous ne recevrez rien d’autre.

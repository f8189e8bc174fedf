# 日本語のページ: 管理、配信停止、購読の申し込みとその確認、
# ダイジェスト全文、お知らせのページ。

## すべてのページ

page-manage-link = ダイジェストの管理
page-bad-link-title = このリンクは無効です
page-bad-link = このリンクは無効です。最新のダイジェストにあるリンクをお使いください。
page-not-done = 処理されませんでした
page-not-a-form = フォームはフォームとして送信する必要があります。何も変更されていません。
page-expired-title = フォームの有効期限切れ
page-expired = このフォームは有効期限が切れています。何も変更されていません。ページを開き直して、もう一度お試しください。
page-failed-title = 問題が発生しました
page-failed = こちら側で問題が発生しました。何も変更されていません。しばらくしてからもう一度お試しください。
page-too-large = フォームが大きすぎるため、このサーバーでは受け付けられません。何も変更されていません。
page-busy = サーバーが混み合っています。何も変更されていません。少し待ってからもう一度お試しください。
page-language = 言語

## ページでの購読の説明

when-hourly = 1時間ごと
when-daily = 毎日 { $hour }
when-weekly = 毎週{ $day } { $hour }
frequency-hourly = 1時間ごと
frequency-daily = 毎日
frequency-weekly = 毎週
kind-changes = 変更
kind-upcoming = 今後の予定
collection-numbered = コレクション { $id }
sub-by = 配信方法: { $channels }
channel-email = メール
channel-xmpp = XMPP
channel-sms = SMS
channel-webhook = Webhook
channel-slack = Slack
channel-discord = Discord
channel-teams = Teams
channel-ntfy = ntfy
channel-matrix = Matrix
sub-paused = 一時停止中
sub-through-group = グループ「{ $group }」経由
sub-through-group-yours = グループ「{ $group }」経由(あなただけ: グループの購読は続きます)
sub-group-time = { $when }(グループの時刻)
sub-paused-by-group = グループが一時停止中
sub-stopped-for-you = あなたへの配信を停止中
sub-already-paused = すでに一時停止中
sub-already-stopped = あなたへの配信はすでに停止中

## 管理ページ

manage-title = ダイジェスト
manage-heading = { $name }さんのダイジェスト
manage-times-hour12 = 時刻は{ $zone }({ $abbr })、12時間制で表示しています。
manage-times-hour24 = 時刻は{ $zone }({ $abbr })、24時間制で表示しています。
manage-subs-heading = 購読
manage-none = 購読はありません。
manage-time = 時刻
manage-change-time = 時刻を変更
manage-send-now = 今すぐ送信
manage-resume = 再開
manage-pause = 一時停止
manage-unsubscribe = 配信停止
manage-for-good = 完全に
manage-end = 終了
manage-cadence = 頻度と配信方法
manage-how-often = 頻度
manage-at = 時刻(毎日・毎週)
manage-on = 曜日(毎週)
manage-by = 配信方法
manage-cadence-note = 次のダイジェストは新しい時刻に届き、前回以降のすべてを含みます。
manage-save = 保存
manage-groups = グループ経由の購読
manage-groups-note = あなたが所属するグループがこれらを購読しています。停止するとあなたへの配信だけが止まり、グループの購読は続きます。
manage-optin = 元に戻す: 再び受け取る
manage-optout = 受け取らない
manage-settings = 設定
manage-timezone = タイムゾーン
manage-daily-hour = 新しい毎日のダイジェストの時刻(現在 { $hour })
manage-week-start = 週の始まり(現在 { $day })
manage-locale = 言語と地域
manage-quiet = 通知を控える時間帯(開始-終了、例: 22:00-07:00。空欄でなし)
manage-quiet-note = 通知はこの時間帯が終わるまで待ち、その間の1時間ごとのダイジェストは終了後の最初の1通にまとめて届きます。毎日・毎週のダイジェストはそのまま送信されます。
manage-quiet-inside = { $what }: { $hour }に送信、通知を控える時間帯の中です。ダイジェストはそのまま送信され、待つのは通知と1時間ごとのダイジェストだけです。
manage-where = 配信先
contact-verified = 確認済み
contact-not-verified = 未確認
contact-disabled = 無効(配信エラー)
contact-by-operator = 運営者が設定
manage-matrix = Matrix ID
manage-matrix-now = Matrix ID(現在 { $id })
manage-matrix-note = あなたのユーザーID(@you:example.org): 招待を承諾すると、ダイジェストは私たちのアカウントからダイレクトルームに届きます。または、私たちのアカウントを招待したルームのID(!room:example.org)。
manage-matrix-change = Matrix IDを変更
manage-matrix-add = Matrix IDを追加
manage-matrix-remove = Matrix IDを削除
manage-new-link = 新しいリンク
manage-new-link-note = このページのリンクを他の人が知っている可能性がある場合(転送したダイジェスト、画面共有など)、新しいリンクを取得してください。新しいリンクはメールアドレスに送られ、このリンクは使えなくなります。受信済みのダイジェストにある配信停止リンクは引き続き使えます。
manage-new-link-button = 新しいリンクを送る
manage-stop = すべて停止
manage-stop-note = すべての購読を一時停止し、グループのダイジェストもあなたへの配信を止め、送信待ちのものを取り消します。それぞれここで再開できます。
manage-stop-button = すべてのダイジェストを停止

## 管理ページで変更した後の表示

done-pause = 一時停止しました。再開するまで何も送信されません。
done-resume = 再開しました。次のダイジェストは通常の時刻に届き、停止中の出来事は含まれません。
done-hour = 変更しました。次のダイジェストは新しい時刻に届きます。
done-cadence = 変更しました。次のダイジェストは新しい時刻に届き、前回以降のすべてを含みます。
done-flushed = 送信しました。ダイジェストは配信中です。次回は今後の変更だけを含みます。
done-nothing = 送信待ちのものはありません。何も送信されていません。
done-end = 完全に終了しました。
done-prefs = 保存しました。ダイジェストは次回から新しい設定に従います。
done-stop = すべて停止しました。すべての購読が一時停止され、グループのダイジェストもあなたには送信されず、送信待ちのものも送られません。
done-optout = あなたへの配信を停止しました。グループの購読は続き、他のメンバーには引き続き届きます。いつでもここで元に戻せます。
done-optin = 再開しました。グループのダイジェストは次回から再びあなたに届きます。
done-matrix = 保存しました。Matrixでのダイジェストは次回から新しいIDに届きます。
done-unmatrix = 削除しました。今後Matrixでは何も送信されません。
new-link-title = 新しいリンクを送信しました
new-link-sent = 新しいリンクをメールアドレスに送信しました。ここに来るのに使ったリンクではこのページは開けなくなります。受信済みのダイジェストにある配信停止リンクは引き続き使えます。
refused-end = この購読を完全に終了するには、チェックボックスにチェックを入れてください
refused-channels = 受け取る方法を1つ以上選んでください
refused-no-matrix = 削除するMatrix IDがありません

## 項目ごとのチェックで値が受け付けられなかったとき。

refusal-timezone-malformed = 「{ $value }」は有効なタイムゾーンではありません。一覧から選んでください
refusal-timezone-unknown = 「{ $value }」というIANAタイムゾーンはありません。一覧から選んでください
refusal-timezone-nearest = 「{ $value }」というIANAタイムゾーンはありません。{ $nearest } のことですか？
refusal-locale = 「{ $value }」は有効な言語タグではありません。ja-JP のようなタグを入力してください
refusal-hour = 「{ $value }」は有効な時刻ではありません。0 から 23 までの時間を入力してください
refusal-quiet-hint = HH:MM-HH:MM の形式（例: 22:00-07:00）で入力するか、設定しない場合は空欄にしてください
refusal-quiet-long = 通知を控える時間帯「{ $value }」が正しくありません。{ $max }バイトを超えています。{ refusal-quiet-hint }
refusal-quiet-char = 通知を控える時間帯「{ $value }」が正しくありません。{ $code } は半角数字でも「-」でもありません。{ refusal-quiet-hint }
refusal-quiet-dash = 通知を控える時間帯「{ $value }」が正しくありません。開始と終了の間に「-」がありません。{ refusal-quiet-hint }
refusal-quiet-start = 通知を控える時間帯「{ $value }」が正しくありません。開始の「{ $part }」が HH:MM の形式ではありません。{ refusal-quiet-hint }
refusal-quiet-end = 通知を控える時間帯「{ $value }」が正しくありません。終了の「{ $part }」が HH:MM の形式ではありません。{ refusal-quiet-hint }
refusal-quiet-same = 通知を控える時間帯「{ $value }」が正しくありません。開始と終了が同じです。{ refusal-quiet-hint }
refusal-matrix-hint = @ユーザー:サーバー または !ルーム:サーバー の形式で入力してください
refusal-matrix-empty = Matrix IDが入力されていません。{ refusal-matrix-hint }
refusal-matrix-long = Matrix ID「{ $value }」が正しくありません。{ $max }バイトを超えています。{ refusal-matrix-hint }
refusal-matrix-space = Matrix ID「{ $value }」が正しくありません。空白が含まれています。{ refusal-matrix-hint }
refusal-matrix-char = Matrix ID「{ $value }」が正しくありません。制御文字か、全角文字などASCII以外の文字が含まれています。{ refusal-matrix-hint }
refusal-matrix-no-server = Matrix ID「{ $value }」が正しくありません。サーバー（:サーバー）が指定されていません。{ refusal-matrix-hint }
refusal-matrix-no-local = Matrix ID「{ $value }」が正しくありません。「:」の前に何もありません。{ refusal-matrix-hint }
refusal-matrix-sigil = Matrix ID「{ $value }」が正しくありません。@（ユーザー）か!（ルーム）で始めてください
refusal-matrix-port = Matrix ID「{ $value }」が正しくありません。サーバーのポート番号が1～65535の範囲にありません。{ refusal-matrix-hint }
refusal-matrix-server = Matrix ID「{ $value }」が正しくありません。サーバー名がホスト名でもIPアドレスでもありません。{ refusal-matrix-hint }
refusal-email-control = メールアドレス「{ $value }」が正しくありません。制御文字が含まれています
refusal-email-non-ascii = メールアドレス「{ $value }」が正しくありません。全角文字などASCII以外の文字を含むアドレスには対応していません
refusal-email-long = メールアドレス「{ $value }」が正しくありません。254文字を超えています
refusal-email-no-at = メールアドレス「{ $value }」が正しくありません。「@」がありません
refusal-email-local-length = メールアドレス「{ $value }」が正しくありません。「@」より前は1～64文字にしてください
refusal-email-dots = メールアドレス「{ $value }」が正しくありません。「@」より前の「.」の位置が正しくありません（先頭・末尾・連続）
refusal-email-quoting = メールアドレス「{ $value }」が正しくありません。「@」より前に使えない文字が含まれています
refusal-email-domain = メールアドレス「{ $value }」が正しくありません。「@」より後ろが有効なドメイン名ではありません
refusal-email-no-dot = メールアドレス「{ $value }」が正しくありません。ドメインには「.」が必要です（例: example.com）

## 配信停止

unsubscribe-title = 配信停止
unsubscribe-ask = 配信を停止しますか?
unsubscribe-older = このリンクは以前のメッセージのものです。一緒に送られたダイジェストを停止することだけができます。それ以外は、最新のダイジェストにあるリンクをお使いください。
unsubscribe-stops = 停止するもの:
unsubscribe-button = 配信停止
unsubscribed = 配信を停止しました
unsubscribed-note = 以下は今後送信されません:
subscribed-again = 購読を再開しました
subscribed-again-note = 以下は次回から再び届きます:
unsubscribe-undo = 元に戻す
unsubscribe-manage-all = すべてのダイジェストを管理
one-click-malformed = ワンクリック配信停止では List-Unsubscribe=One-Click をそのまま送信する必要があります。何も変更されていません。
one-click-done = 配信を停止しました。これらのダイジェストは今後送信されません。

## 購読の申し込みと確認

signup-title = 購読
signup-heading = ダイジェストを購読
signup-sent-title = メールをご確認ください
signup-sent = このアドレスでダイジェストを受け取れる場合は、リンク付きのメッセージが届きます。リンクを開いて「{ signup-confirm-button }」を押すと、ダイジェストが始まります。それまでは何も送信されません。
signup-nothing-offered = 現在、ここで購読できるものはありません。
signup-email = メールアドレス
signup-collections = コレクション
signup-zone = タイムゾーン
signup-submit = 購読する
signup-note = アドレス確認のメッセージを1通だけ送ります。確認されるまで、それ以外は何も送りません。
signup-limited-title = 申し込みが多すぎます
signup-limited = 最近、あなたのネットワークから、またはこのアドレス宛ての申し込みが多すぎるか、直近1時間にここで行われた申し込みが多すぎます。何も送信されていません。{ $when } UTC以降にもう一度お試しください。
signup-refused-email-long = メールアドレスが長すぎます
signup-refused-frequency = 1時間ごと、毎日、毎週のいずれかを選んでください
signup-refused-hour = 0から23の時刻を選んでください
signup-refused-day = 曜日を選んでください
signup-refused-zone = タイムゾーンを一覧から選んでください
signup-refused-collections = コレクションを1つ以上選んでください
signup-refused-too-many = コレクションが多すぎます
signup-refused-unknown = コレクションは一覧から選んでください
signup-wish = { $when }({ $zone })
confirm-title = 確認
confirm-heading = 購読の確認
confirm-digests-of = ダイジェストの対象:
signup-confirm-button = 確認する
confirm-done-title = 購読しました
confirm-done = ダイジェストは次の配信時刻から始まります。
confirm-already-title = 確認済みです
confirm-already = この申し込みはすでに確認されています。これ以上の処理は行っていません。

## ダイジェスト全文

digest-empty = このダイジェストには何もありません。
digest-more = ほかに{ $more }件はここに表示されていません。このページには{ $count }件のうち最初の{ $listed }件を表示しています。
digest-all = 全{ $count }件。

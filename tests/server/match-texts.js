// Pages from outside and inside the sample's world, shared by the tests of the match thresholds: what the sample
// model (`npm start`'s) should and should not show ads on.

/** A chemistry lesson: nothing any ad is about; the sample model knows 3 of its 15 distinct words (水, 反応, 合わせる), the disaster kit's. */
export const LESSON = '水素と酸素が反応すると水ができる。化学反応式では原子の数が両辺で等しくなるように係数を合わせる。触媒は反応の速さを変える。';
/** A recipe for miso soup: nothing any ad is about either. */
export const RECIPE = '味噌汁の作り方。鍋に水と昆布を入れて火にかけ、沸騰する前に昆布を取り出す。豆腐とわかめを入れ、火を止めてから味噌を溶き入れる。';
/** A football report: the sports ads' page. */
export const SOCCER = 'サッカー日本代表はワールドカップ予選で勝利し、監督は選手たちの粘り強さを称えた。次の試合ではスタジアムに多くのサポーターが集まる予定だ。';
